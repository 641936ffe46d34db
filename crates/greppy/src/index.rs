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

use crate::plan::{Query, Trigram, trigram};
use anyhow::{Context, Result, bail, ensure};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::Write;
use std::ops::Range;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

const MAGIC: &[u8; 8] = b"GREPPYI3";
// 4: files with a UTF-16 byte order mark are always candidates (3 left
// them out). 5: blocks. 6: blocks of 4 KiB from 16 KiB files on, with
// 512-byte filters (were 16 KiB from 64 KiB, 1 KiB), laid out word by word.
// 7: files up to 128 MiB are indexed (were 16 MiB; same layout, rebuilt so
// that large files get their trigrams). 8: the files that never match are
// listed, so that a scan skips them. 9: copies of the text files. 10: a
// block's filter holds each trigram with the byte after it, too. 11: a
// posting list of more than about one file in 21 is a bitmap. 12: a
// block's filter has one bit per string, not two.
const VERSION: u32 = 12;
const HEADER: usize = 8 + 5 * 4 + 2 * 8 + 14 * 8;
/// A trigram's entry in the table: the trigram, its first posting's
/// number, how many it has, and where its ids start (in words of 4 bytes).
const TABLE_ENTRY: usize = 16;

/// The bit of a file's `kept` word that says the index keeps a copy.
const KEPT: u64 = 1 << 63;

/// Text files from this size on are cut into blocks. A selective search's
/// candidates are mostly files of a few blocks: with blocks of 16 KiB from
/// 64 KiB on, it read 328 KiB at the median on the benchmark corpus; with
/// these, 82 KiB, for an index 14% larger.
pub const BLOCKED_FROM: u64 = 16 << 10;
/// About how many bytes a block holds (it ends at the end of a line).
pub const BLOCK: usize = 4 << 10;
/// The bytes of a block's Bloom filter: a bit per trigram, and one per
/// trigram with the byte that follows it (a four-byte string).
const BLOOM: usize = 512;
/// A block's record: offset, line, filter.
const BLOCK_RECORD: usize = 16 + BLOOM;

/// The bits a trigram (or four-byte string) sets in a block's filter: one.
/// A block's few thousand strings set 29% of its 4,096 bits on average on
/// the benchmark corpus with one, 49% with two; with one, the selective
/// queries' blocks are tested in 8.7 against 10.1 µs per query, and read
/// 25.8 against 27.2 KiB.
const BLOOM_K: usize = 1;

/// The bit of trigram `t` in a block's filter.
fn bloom_bits(t: Trigram) -> [usize; BLOOM_K] {
    hashed_bits(u64::from(t))
}

/// The bit of trigram `t` followed by byte `next` (a four-byte string,
/// ASCII lower case) in a block's filter.
fn bloom_bits4(t: Trigram, next: u8) -> [usize; BLOOM_K] {
    hashed_bits((1 << 32) | (u64::from(t) << 8) | u64::from(next.to_ascii_lowercase()))
}

fn hashed_bits(key: u64) -> [usize; BLOOM_K] {
    let h = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let m = BLOOM as u64 * 8;
    [((h >> 40) % m) as usize]
}

#[cfg(test)]
fn bloom_has(bloom: &[u8], t: Trigram, next: Option<u8>) -> bool {
    let has = |b: &usize| bloom.get(b / 8).is_some_and(|x| x & (1 << (b % 8)) != 0);
    bloom_bits(t).iter().all(has) && next.is_none_or(|n| bloom_bits4(t, n).iter().all(has))
}

/// The filter bits a block must have for `q` to admit it, as (word, bits)
/// pairs of 64-bit words, when `q` asks only for trigrams, all of them (the
/// common case); `None` when it is not so simple. Made once per file, it
/// tests a block with a few word compares, not a walk of the query and two
/// hashes per trigram per block.
fn bloom_mask(q: &Query) -> Option<Vec<(usize, u64)>> {
    fn add(q: &Query, words: &mut [u64; BLOOM_WORDS]) -> Option<()> {
        match q {
            Query::Tri(t) => {
                for b in bloom_bits(*t) {
                    words[b / 64] |= 1 << (b % 64);
                }
                Some(())
            }
            Query::Next(t, n) => {
                for b in bloom_bits(*t).into_iter().chain(bloom_bits4(*t, *n)) {
                    words[b / 64] |= 1 << (b % 64);
                }
                Some(())
            }
            Query::And(qs) => qs.iter().try_for_each(|q| add(q, words)),
            Query::All | Query::Or(_) => None,
        }
    }
    let mut words = [0u64; BLOOM_WORDS];
    add(q, &mut words)?;
    // The words with the most bits first: a block that lacks one is
    // found out soonest.
    let mut mask: Vec<(std::cmp::Reverse<u32>, usize, u64)> = words
        .iter()
        .enumerate()
        .filter(|(_, bits)| **bits != 0)
        .map(|(w, bits)| (std::cmp::Reverse(bits.count_ones()), w, *bits))
        .collect();
    mask.sort_unstable();
    Some(mask.into_iter().map(|(_, w, bits)| (w, bits)).collect())
}

/// The words of a Bloom filter.
const BLOOM_WORDS: usize = BLOOM / 8;

/// How a search tests a file's blocks against its query ([`Index::regions`]):
/// the query, and the filter bits it needs, worked out once per search
/// rather than once per candidate, and only if a candidate has blocks.
#[derive(Debug)]
pub struct BlockTest<'q> {
    query: &'q Query,
    mask: std::sync::OnceLock<Option<Vec<(usize, u64)>>>,
}

impl<'q> BlockTest<'q> {
    pub fn new(query: &'q Query) -> BlockTest<'q> {
        BlockTest {
            query,
            mask: std::sync::OnceLock::new(),
        }
    }

    fn mask(&self) -> Option<&[(usize, u64)]> {
        self.mask.get_or_init(|| bloom_mask(self.query)).as_deref()
    }
}

/// The filters of one file's `n` blocks as the index lays them out: word
/// `w` of block `j` is the `w * n + j`th u64.
#[derive(Clone, Copy)]
struct Filters<'a> {
    bytes: &'a [u8],
    n: usize,
}

impl Filters<'_> {
    fn word(&self, j: usize, w: usize) -> u64 {
        u64_at(self.bytes, 8 * (w * self.n + j)).unwrap_or(0)
    }

    /// Whether block `j`'s filter has every bit of `mask` ([`bloom_mask`]).
    fn has_all(&self, j: usize, mask: &[(usize, u64)]) -> bool {
        mask.iter().all(|&(w, bits)| self.word(j, w) & bits == bits)
    }

    /// The blocks whose filters have every bit of `mask`, in order: the
    /// word with the most bits is read for every block, in one pass along
    /// its column; only the blocks it lets through are tested further.
    fn having_all(&self, mask: &[(usize, u64)]) -> Vec<usize> {
        let Some(&(w, bits)) = mask.iter().max_by_key(|(_, b)| b.count_ones()) else {
            return (0..self.n).collect();
        };
        let column = self
            .bytes
            .get(8 * w * self.n..8 * (w + 1) * self.n)
            .unwrap_or_default();
        column
            .chunks_exact(8)
            .enumerate()
            .filter(|(_, word)| {
                u64::from_le_bytes((*word).try_into().unwrap_or_default()) & bits == bits
            })
            .map(|(j, _)| j)
            .filter(|&j| self.has_all(j, mask))
            .collect()
    }

    /// Whether block `j`'s filter may hold `t` (followed by `next`, if
    /// given).
    fn has(&self, j: usize, t: Trigram, next: Option<u8>) -> bool {
        let has = |b: &usize| self.word(j, b / 64) & (1 << (b % 64)) != 0;
        bloom_bits(t).iter().all(has) && next.is_none_or(|n| bloom_bits4(t, n).iter().all(has))
    }
}

/// An entry's blocks as [`Parts`] holds them.
fn entry_blocks(e: &FileEntry) -> FileBlocks<'static> {
    let blooms: Vec<&[u8]> = e.blocks.iter().map(|b| &*b.bloom).collect();
    let records = e.blocks.iter().map(|b| (b.offset, b.line)).collect();
    (records, std::borrow::Cow::Owned(transpose(&blooms)))
}

/// `blooms` (one filter per block, in order) laid out word by word
/// ([`Filters`]).
fn transpose(blooms: &[&[u8]]) -> Vec<u8> {
    let n = blooms.len();
    let mut out = vec![0u8; n * BLOOM];
    for (j, bloom) in blooms.iter().enumerate() {
        for (w, word) in bloom.chunks(8).take(BLOOM_WORDS).enumerate() {
            let at = 8 * (w * n + j);
            out[at..at + word.len()].copy_from_slice(word);
        }
    }
    out
}

/// A block of a large file: where it starts, its first line's number, and
/// the filter of its trigrams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub offset: u64,
    pub line: u64,
    pub bloom: Box<[u8]>,
}

/// Where the blocks of `text` lie: (start, end, first line), whole lines
/// of about [`BLOCK`] bytes each. A block ends just after a newline (but
/// the last), so no trigram crosses from one block into the next.
fn block_spans(text: &[u8]) -> Vec<(usize, usize, u64)> {
    let mut out = Vec::with_capacity(text.len() / BLOCK + 1);
    let (mut start, mut line) = (0usize, 1u64);
    while start < text.len() {
        let mut end = (start + BLOCK).min(text.len());
        if end < text.len() {
            end = memchr::memchr(b'\n', &text[end..]).map_or(text.len(), |i| end + i + 1);
        }
        out.push((start, end, line));
        line += memchr::memchr_iter(b'\n', &text[start..end]).count() as u64;
        start = end;
    }
    out
}

/// Sets trigram `t`'s bits in a block's filter, held as words, and those
/// of `t` followed by `next`, if a byte follows it on its line.
#[inline(always)]
fn bloom_add(bloom: &mut [u64; BLOOM_WORDS], t: Trigram, next: Option<u8>) {
    for a in bloom_bits(t) {
        bloom[(a / 64) % BLOOM_WORDS] |= 1 << (a % 64);
    }
    if let Some(n) = next {
        for a in bloom_bits4(t, n) {
            bloom[(a / 64) % BLOOM_WORDS] |= 1 << (a % 64);
        }
    }
}

/// A filter held as words, as the index keeps it: bit `a` is bit `a % 8`
/// of byte `a / 8` (the words' little-endian bytes).
fn bloom_bytes(bloom: &[u64; BLOOM_WORDS]) -> Box<[u8]> {
    bloom.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The blocks of `text` ([`block_spans`]), each with the filter of its
/// trigrams.
fn blocks_of(text: &[u8]) -> Vec<Block> {
    block_spans(text)
        .into_iter()
        .map(|(start, end, line)| {
            let mut bloom = [0u64; BLOOM_WORDS];
            let span = &text[start..end];
            for (i, w) in span.windows(3).enumerate() {
                if !w.contains(&b'\n') {
                    let t = trigram(w[0], w[1], w[2]);
                    bloom_add(
                        &mut bloom,
                        t,
                        span.get(i + 3).filter(|&&b| b != b'\n').copied(),
                    );
                }
            }
            Block {
                offset: start as u64,
                line,
                bloom: bloom_bytes(&bloom),
            }
        })
        .collect()
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

/// A compressed copy of a file: an LZ4 block ("frame") per block of the
/// file (or one for all of it, if it has no blocks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The frames, one after another.
    pub bytes: Arc<[u8]>,
    /// Where each block's frame starts in `bytes` (empty: one frame).
    pub frames: Arc<[u32]>,
}

impl Kept {
    /// The copy of `text`, cut as `blocks` cut it; `None` if it cannot be
    /// compressed (it always can).
    fn of(text: &[u8], blocks: &[Block]) -> Option<Kept> {
        let mut bytes = Vec::with_capacity(text.len() / 2);
        let mut frames = Vec::with_capacity(blocks.len());
        let ends = blocks.iter().skip(1).map(|b| b.offset as usize);
        for (b, end) in blocks.iter().zip(ends.chain([text.len()])) {
            frames.push(u32::try_from(bytes.len()).ok()?);
            compress_onto(&mut bytes, text.get(b.offset as usize..end)?)?;
        }
        if blocks.is_empty() {
            compress_onto(&mut bytes, text)?;
        }
        Some(Kept {
            bytes: bytes.into(),
            frames: frames.into(),
        })
    }
}

/// Appends the LZ4 block of `input` to `out`.
fn compress_onto(out: &mut Vec<u8>, input: &[u8]) -> Option<()> {
    let at = out.len();
    out.resize(at + lz4::block::compress_bound(input.len()).ok()?, 0);
    let n = lz4::block::compress_to_buffer(input, None, false, &mut out[at..]).ok()?;
    out.truncate(at + n);
    Some(())
}

/// The `len` bytes that the LZ4 block `frame` holds, written to `out` at
/// `at` (grown to hold them if it is shorter); `None` if it does not hold
/// exactly that many (a damaged index). LZ4's
/// own C decoder, which never reads or writes past either buffer whatever
/// the frame holds: a third faster than `lz4_flex`'s checked one here
/// (4.1 against 3.1 GB/s over 4 KiB blocks of the benchmark corpus).
fn decompress_at(out: &mut Vec<u8>, at: usize, frame: &[u8], len: usize) -> Option<()> {
    // No LZ4 block holds more than about 255 times its own length: a
    // damaged length is not allocated.
    if len > frame.len().saturating_mul(255).saturating_add(16) {
        return None;
    }
    let end = at.checked_add(len)?;
    if out.len() < end {
        out.resize(end, 0);
    }
    let size = i32::try_from(len).ok()?;
    let n = lz4::block::decompress_to_buffer(frame, Some(size), &mut out[at..end]).ok()?;
    (n == len).then_some(())
}

impl FileEntry {
    /// Reads `path`; `None` if it is gone.
    pub fn read(path: &Path) -> Option<FileEntry> {
        let meta = std::fs::metadata(path).ok()?;
        let size = meta.len();
        let unindexed = FileEntry {
            size,
            trigrams: None,
            blocks: Arc::from(Vec::new()),
            never: false,
            kept: None,
        };
        if size > MAX_INDEXED || !meta.is_file() {
            return Some(unindexed);
        }
        let Ok(text) = std::fs::read(path) else {
            return Some(unindexed);
        };
        if text.starts_with(b"\xff\xfe") || text.starts_with(b"\xfe\xff") {
            // rg reads a file with a UTF-16 byte order mark as the UTF-8 it
            // decodes to: its bytes' trigrams (and NULs) say nothing.
            return Some(unindexed);
        }
        if let Some(nul) = memchr::memchr(0, &text) {
            // rg stops at a NUL byte without searching the block it came in
            // (grep-searcher's `BinaryDetection::quit`), and its first block
            // is at least one page: such a file never matches, and has no
            // trigrams. Past that, rg's blocks decide which lines it
            // reports, so the file has no blocks of its own and is read
            // whole; but whatever it reports holds its pattern's trigrams,
            // so the trigrams still decide whether it is read at all.
            let never = nul < NEVER_MATCHES_BELOW;
            let trigrams = if never {
                Vec::new()
            } else {
                trigrams_with_masks(&text, false).0
            };
            return Some(FileEntry {
                size: text.len() as u64,
                trigrams: Some(trigrams.into()),
                blocks: Arc::from(Vec::new()),
                never,
                kept: None,
            });
        }
        let (tris, blocks) = trigrams_with_masks(&text, text.len() as u64 >= BLOCKED_FROM);
        let kept = Kept::of(&text, &blocks);
        Some(FileEntry {
            size: text.len() as u64,
            trigrams: Some(tris.into()),
            blocks: blocks.into(),
            never: false,
            kept,
        })
    }

    /// Whether this file may match `q`.
    pub fn admits(&self, q: &Query) -> bool {
        if self.never {
            return false;
        }
        match &self.trigrams {
            None => true,
            Some(t) => q.admits(&|x, next| {
                t.binary_search_by_key(&x, |e| e.0)
                    .is_ok_and(|i| next.is_none_or(|b| t[i].1 & next_bit(b) != 0))
            }),
        }
    }
}

/// How many bytes go through the dense table ([`Dense`]): tab, carriage
/// return and printable ASCII, upper case folded to lower case.
const ALPHABET: usize = 71;
/// Entries in the dense table: one per trigram of the alphabet.
const DENSE_LEN: usize = ALPHABET * ALPHABET * ALPHABET;
/// Bytes of the dense table's presence bitmap, in whole 64-bit words.
const SEEN: usize = DENSE_LEN.div_ceil(64) * 8;

/// Each byte's place in the alphabet ([`ALPHABET`], in byte order, so that
/// the table's order is the trigrams'), or `u8::MAX` if it has none; and
/// each place's byte.
const CODES: ([u8; 256], [u8; ALPHABET]) = {
    let (mut code, mut byte) = ([u8::MAX; 256], [0u8; ALPHABET]);
    let (mut b, mut n) = (0usize, 0usize);
    while b < 128 {
        if b == 9 || b == 13 || (b >= 32 && b < 127 && !(b >= 65 && b <= 90)) {
            code[b] = n as u8;
            byte[n] = b as u8;
            n += 1;
        }
        b += 1;
    }
    assert!(n == ALPHABET);
    b = 65;
    while b <= 90 {
        code[b] = code[b + 32];
        b += 1;
    }
    (code, byte)
};

/// The dense table behind [`trigrams_with_masks`]: for every trigram of
/// [`ALPHABET`] bytes (350 KiB of masks and a 44 KiB presence bitmap per
/// thread: they stay in a core's cache), reset after each file through the
/// list of those it touched, so that between files both tables are all
/// zeros. They are anonymous
/// mappings, which [`release_scratch`] gives back to the system after a
/// build (zeros again when next touched).
struct Dense {
    mask: memmap2::MmapMut,
    seen: memmap2::MmapMut,
    touched: Vec<u32>,
}

impl Dense {
    fn new() -> Option<Dense> {
        Some(Dense {
            mask: memmap2::MmapMut::map_anon(DENSE_LEN).ok()?,
            seen: memmap2::MmapMut::map_anon(SEEN).ok()?,
            touched: Vec::new(),
        })
    }

    /// Gives the tables' pages back; they read as zeros when next touched.
    fn release(&mut self) {
        for map in [&self.mask, &self.seen] {
            // SAFETY: between files the tables hold only zeros, and a
            // private anonymous mapping's dropped pages read as zeros, so
            // no content changes; nothing borrows the maps meanwhile (the
            // table is borrowed mutably).
            let _ = unsafe { map.unchecked_advise(memmap2::UncheckedAdvice::DontNeed) };
        }
        self.touched = Vec::new();
    }
}

/// Past this many distinct ASCII trigrams, a file's are put in order by a
/// scan of the presence bitmap (32,768 words) rather than by a sort.
const SCAN_FROM: usize = 2048;

thread_local! {
    static DENSE: std::cell::RefCell<Option<Dense>> = std::cell::RefCell::new(Dense::new());
}

/// Gives back the trigram tables of the global pool's threads and of this
/// one: 0.4 MiB each, which every thread that indexed kept for good
/// (4.5 MiB of a daemon's 20 MiB after indexing a small tree).
pub fn release_scratch() {
    rayon::broadcast(|_| release_thread_scratch());
    release_thread_scratch();
}

/// Gives back this thread's trigram tables (see [`release_scratch`]): a
/// thread that reads a few changed files now and then need not keep them.
pub fn release_thread_scratch() {
    DENSE.with(|d| {
        if let Ok(mut d) = d.try_borrow_mut()
            && let Some(d) = d.as_mut()
        {
            d.release();
        }
    });
}

/// The trigrams of `text` (ASCII lower case, within a line), sorted and
/// unique, each with the mask of the bytes that follow it; and with
/// `blocked`, its blocks ([`blocks_of`]), made in the same pass over the
/// bytes. Trigrams of ASCII bytes go through a dense table (no sort of
/// every window); the rest are sorted.
fn trigrams_with_masks(text: &[u8], blocked: bool) -> (Vec<(Trigram, u8)>, Vec<Block>) {
    DENSE.with_borrow_mut(|d| {
        let fallback = || {
            let blocks = if blocked { blocks_of(text) } else { Vec::new() };
            (trigrams_sorted(text), blocks)
        };
        let Some(d) = d.as_mut() else {
            return fallback();
        };
        // Fixed sizes: the loop indexes them with no bounds checks.
        let (Ok(mask), Ok(seen)) = (
            <&mut [u8; DENSE_LEN]>::try_from(&mut d.mask[..]),
            <&mut [u8; SEEN]>::try_from(&mut d.seen[..]),
        ) else {
            return fallback();
        };
        let mut marks = Marks {
            mask,
            seen,
            touched: &mut d.touched,
            wide: Vec::new(),
        };
        let blocks = if blocked {
            block_spans(text)
                .into_iter()
                .map(|(start, end, line)| {
                    let mut bloom = [0u64; BLOOM_WORDS];
                    for l in lines(&text[start..end]) {
                        marks.line::<true>(l, &mut bloom);
                    }
                    Block {
                        offset: start as u64,
                        line,
                        bloom: bloom_bytes(&bloom),
                    }
                })
                .collect()
        } else {
            let mut none = [0u64; BLOOM_WORDS];
            for l in lines(text) {
                marks.line::<false>(l, &mut none);
            }
            Vec::new()
        };
        let Marks {
            mask,
            seen,
            touched,
            mut wide,
        } = marks;
        // In trigram order (the table keeps it): by a scan of the presence
        // bitmap when that is cheaper than sorting what was seen.
        if touched.len() > SCAN_FROM {
            touched.clear();
            for (w, word) in seen.chunks_exact(8).enumerate() {
                let mut bits = u64::from_le_bytes(word.try_into().unwrap_or_default());
                while bits != 0 {
                    touched.push((w * 64) as u32 + bits.trailing_zeros());
                    bits &= bits - 1;
                }
            }
        } else {
            touched.sort_unstable();
        }
        let mut out: Vec<(Trigram, u8)> = Vec::with_capacity(touched.len() + wide.len());
        let (_, bytes) = &CODES;
        for &idx in touched.iter() {
            let idx = idx as usize % DENSE_LEN;
            let byte = |place: usize| u32::from(bytes[place % ALPHABET]);
            let t =
                (byte(idx / (ALPHABET * ALPHABET)) << 16) | (byte(idx / ALPHABET) << 8) | byte(idx);
            out.push((t, mask[idx]));
            mask[idx] = 0;
            seen[idx >> 3] = 0;
        }
        touched.clear();
        if !wide.is_empty() {
            wide.sort_unstable();
            for p in wide {
                let (t, m) = (p >> 8, p as u8);
                match out.last_mut() {
                    Some(last) if last.0 == t => last.1 |= m,
                    _ => out.push((t, m)),
                }
            }
            // The ASCII and the other trigrams interleave: one sort of the
            // distinct ones (a wide trigram is never an ASCII one, so there
            // are no duplicates to fold).
            out.sort_unstable_by_key(|e| e.0);
        }
        (out, blocks)
    })
}

/// The lines of `text`, without their newlines.
fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut from = 0;
    memchr::memchr_iter(b'\n', text)
        .chain([text.len()])
        .map(move |e| (&text[from..e], from = e + 1).0)
}

/// What one pass of [`trigrams_with_masks`] marks: the dense table (each
/// ASCII trigram's mask, and whether it was seen, with the list of those
/// that were), and the other trigrams, each packed with its next byte's
/// bit.
struct Marks<'a> {
    mask: &'a mut [u8; DENSE_LEN],
    seen: &'a mut [u8; SEEN],
    touched: &'a mut Vec<u32>,
    wide: Vec<u32>,
}

impl Marks<'_> {
    /// Marks the trigrams of line `l` (no newline in it), each with the
    /// byte after it, if any; with `BLOOMED`, sets their bits (and those of
    /// the four-byte strings) in `bloom` ([`bloom_add`]). Every
    /// window but the line's last has a next byte, so the loop takes
    /// windows and next bytes in step, with no bounds checks; a window is
    /// in the dense table exactly when its index is within it ([`SPREAD`]).
    #[inline(always)]
    fn line<const BLOOMED: bool>(&mut self, l: &[u8], bloom: &mut [u64; BLOOM_WORDS]) {
        let n = l.len();
        if n < 3 {
            return;
        }
        let spread = |b: u8| SPREAD[usize::from(b)];
        let low = |b: u8| u32::from(LOWER[usize::from(b)]);
        let mut t = (low(l[0]) << 8) | low(l[1]);
        let (mut c0, mut c1) = (spread(l[0]), spread(l[1]));
        let mut window = |b: u8, after: Option<u8>| {
            t = ((t << 8) | low(b)) & 0xff_ffff;
            let c2 = spread(b);
            let next = after.map_or(0, next_bit);
            let idx = (c0 * ALPHABET as u32 + c1) * ALPHABET as u32 + c2;
            (c0, c1) = (c1, c2);
            if let Some(m) = self.mask.get_mut(idx as usize) {
                if *m == 0 {
                    // Perhaps not seen yet (or seen only at line ends):
                    // only then is the presence bit read.
                    let (w, bit) = ((idx as usize >> 3) % SEEN, 1u8 << (idx & 7));
                    if self.seen[w] & bit == 0 {
                        self.seen[w] |= bit;
                        self.touched.push(idx);
                    }
                }
                *m |= next;
            } else {
                self.wide.push((t << 8) | u32::from(next));
            }
            if BLOOMED {
                bloom_add(bloom, t, after);
            }
        };
        for (&b, &after) in l[2..n - 1].iter().zip(&l[3..]) {
            window(b, Some(after));
        }
        window(l[n - 1], None);
    }
}

/// Each byte's place in [`ALPHABET`] as a dense index takes it, with a
/// byte outside the alphabet spread far enough (2^19) that any window
/// holding one has an index past the dense table (and within a `u32`):
/// one bounds check tells both.
const SPREAD: [u32; 256] = {
    let mut s = [1u32 << 19; 256];
    let mut b = 0;
    while b < 256 {
        if CODES.0[b] != u8::MAX {
            s[b] = CODES.0[b] as u32;
        }
        b += 1;
    }
    s
};

/// Each byte in ASCII lower case.
const LOWER: [u8; 256] = {
    let mut s = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        s[b] = (b as u8).to_ascii_lowercase();
        b += 1;
    }
    s
};

/// What [`trigrams_with_masks`] gives, by sorting every window packed with
/// its next byte's bit (without the dense table: slower, no memory kept).
fn trigrams_sorted(text: &[u8]) -> Vec<(Trigram, u8)> {
    let mut packed: Vec<u32> = text
        .windows(3)
        .enumerate()
        .filter(|(_, w)| !w.contains(&b'\n'))
        .map(|(i, w)| {
            let next = text.get(i + 3).filter(|&&b| b != b'\n');
            (trigram(w[0], w[1], w[2]) << 8) | next.map_or(0, |&b| u32::from(next_bit(b)))
        })
        .collect();
    packed.sort_unstable();
    let mut out: Vec<(Trigram, u8)> = Vec::new();
    for p in packed {
        match out.last_mut() {
            Some(last) if last.0 == p >> 8 => last.1 |= p as u8,
            _ => out.push((p >> 8, p as u8)),
        }
    }
    out
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

fn u32_at(d: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(d: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(d.get(at..at + 8)?.try_into().ok()?))
}

/// A file's blocks as [`Parts`] holds them: (offset, line) each, and their
/// filters laid out as the index keeps them ([`Filters`]).
type FileBlocks<'a> = (Vec<(u64, u64)>, std::borrow::Cow<'a, [u8]>);

/// An index before it is laid out as bytes.
struct Parts<'a> {
    files: Vec<&'a Path>,
    sizes: Vec<u64>,
    unindexed: Vec<u32>,
    never: Vec<u32>,
    /// Per trigram: the file ids and the masks of the bytes after it.
    table: Postings,
    /// Per file, its blocks: (offset, line) each, and their filters laid
    /// out as the index keeps them ([`Filters`]).
    blocks: Vec<FileBlocks<'a>>,
    /// Per file, its compressed copy, if kept: the frames' bytes, and
    /// where each block's frame starts in them.
    kept: Vec<Option<FileKept<'a>>>,
    built_at: u64,
}

/// A file's copy as [`Parts`] holds it.
type FileKept<'a> = (&'a [u8], std::borrow::Cow<'a, [u32]>);

/// An entry's copy as [`Parts`] holds it.
fn entry_kept(e: &FileEntry) -> Option<FileKept<'_>> {
    e.kept
        .as_ref()
        .map(|k| (&*k.bytes, std::borrow::Cow::Borrowed(&*k.frames)))
}

impl Index {
    /// Indexes `files`, in parallel. Files that vanish before they are read
    /// are left out.
    pub fn build(mut files: Vec<PathBuf>) -> Index {
        let built_at = now_ns();
        files.sort();
        files.dedup();
        let read: Vec<(PathBuf, FileEntry)> = files
            .into_par_iter()
            .filter_map(|p| FileEntry::read(&p).map(|e| (p, e)))
            .collect();
        let index = Index::from_entries(&read, built_at);
        // Hundreds of thousands of allocations: freed on every core.
        read.into_par_iter().for_each(drop);
        index
    }

    /// The index of `entries`, which are in path order.
    fn from_entries(entries: &[(PathBuf, FileEntry)], built_at: u64) -> Index {
        let mut unindexed = Vec::new();
        let mut never = Vec::new();
        let mut lists: Vec<&[(Trigram, u8)]> = Vec::with_capacity(entries.len());
        for (id, (_, e)) in entries.iter().enumerate() {
            if e.never {
                never.push(id as u32);
            }
            match &e.trigrams {
                Some(tris) => lists.push(tris),
                None => {
                    unindexed.push(id as u32);
                    lists.push(&[]);
                }
            }
        }
        Index::from_parts(Parts {
            files: entries.iter().map(|(p, _)| p.as_path()).collect(),
            sizes: entries.iter().map(|(_, e)| e.size).collect(),
            unindexed,
            never,
            table: Postings::invert(&lists),
            blocks: entries.iter().map(|(_, e)| entry_blocks(e)).collect(),
            kept: entries.iter().map(|(_, e)| entry_kept(e)).collect(),
            built_at,
        })
    }

    fn from_parts(mut parts: Parts<'_>) -> Index {
        fit_copies(&mut parts);
        Index::from_bytes(Bytes::Owned(serialize(&parts))).expect("a new index is well formed")
    }

    /// A new index: this one with `changes` applied (a path to its new
    /// entry, or to `None` if it is gone). Unchanged files keep their
    /// postings; nothing of theirs is read again. `built_at` is when the
    /// changes were read (the older of that and this index's time is kept:
    /// files changed before it may still be missing).
    pub fn merge(&self, changes: &BTreeMap<PathBuf, Option<FileEntry>>, built_at: u64) -> Index {
        // The new file list, in path order, and where each file came from.
        let mut files: Vec<&Path> = Vec::with_capacity(self.files + changes.len());
        let mut sizes = Vec::with_capacity(self.files + changes.len());
        let mut blocks = Vec::with_capacity(self.files + changes.len());
        let mut copies = Vec::with_capacity(self.files + changes.len());
        let mut old_to_new = vec![u32::MAX; self.files];
        let mut new_entries: Vec<(u32, &FileEntry)> = Vec::new();
        let mut old = (0..self.files).peekable();
        let mut changed = changes.iter().peekable();
        loop {
            let take_old = match (old.peek(), changed.peek()) {
                (None, None) => break,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some(&o), Some((p, _))) => self.file(o) < p.as_path(),
            };
            if take_old {
                let o = old.next().unwrap_or_default();
                old_to_new[o] = files.len() as u32;
                files.push(self.file(o));
                sizes.push(self.size(o));
                let range = self.block_range(o);
                let records = range.clone().map(|b| self.block(b)).collect();
                let filters = self.filters(range.clone()).bytes;
                blocks.push((records, std::borrow::Cow::Borrowed(filters)));
                copies.push(self.kept_parts(o, range));
                continue;
            }
            let Some((p, e)) = changed.next() else { break };
            // A changed file replaces the old one of the same path.
            if old.peek().is_some_and(|&o| self.file(o) == p.as_path()) {
                old.next();
            }
            if let Some(e) = e {
                new_entries.push((files.len() as u32, e));
                files.push(p);
                sizes.push(e.size);
                blocks.push(entry_blocks(e));
                copies.push(entry_kept(e));
            }
        }
        let kept = |at, count| -> Vec<u32> {
            self.ids(at, count)
                .into_iter()
                .map(|o| old_to_new[o as usize])
                .filter(|&n| n != u32::MAX)
                .collect()
        };
        let mut unindexed = kept(self.unindexed_at, self.unindexed);
        let mut never = kept(self.never_at, self.never);
        let mut added: FxHashMap<Trigram, Vec<(u32, u8)>> = FxHashMap::default();
        for (id, e) in &new_entries {
            if e.never {
                never.push(*id);
            }
            match &e.trigrams {
                Some(tris) => {
                    for (t, m) in tris.iter() {
                        added.entry(*t).or_default().push((*id, *m));
                    }
                }
                None => unindexed.push(*id),
            }
        }
        unindexed.sort_unstable();
        never.sort_unstable();
        let mut added: Vec<(Trigram, Vec<(u32, u8)>)> = added.into_iter().collect();
        added.sort_unstable_by_key(|(t, _)| *t);
        let mut table =
            Postings::with_capacity(self.trigrams + added.len(), self.kept_at - self.masks);
        let mut added = added.into_iter().peekable();
        for i in 0..self.trigrams {
            let (t, list) = self.entry(i);
            while let Some((a, _)) = added.peek()
                && *a < t
            {
                if let Some((a, v)) = added.next() {
                    table.push(a, v);
                }
            }
            let mut kept: Vec<(u32, u8)> = list
                .postings()
                .filter_map(|(o, m)| {
                    let n = *old_to_new.get(o as usize)?;
                    (n != u32::MAX).then_some((n, m))
                })
                .collect();
            if let Some((a, _)) = added.peek()
                && *a == t
            {
                // New ids are files not in the old index: no duplicates.
                kept.extend(added.next().map(|(_, v)| v).unwrap_or_default());
                kept.sort_unstable_by_key(|(id, _)| *id);
            }
            table.push(t, kept);
        }
        for (a, v) in added {
            table.push(a, v);
        }
        Index::from_parts(Parts {
            files,
            sizes,
            unindexed,
            never,
            table,
            blocks,
            kept: copies,
            built_at: built_at.min(self.built_at),
        })
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

    /// An index from bytes in memory (an index file's), checked as
    /// [`Index::open`] checks a file: malformed bytes are an error.
    pub fn from_vec(bytes: Vec<u8>) -> Result<Index> {
        Index::from_bytes(Bytes::Owned(bytes)).context("not a greppy index")
    }

    fn from_bytes(data: Bytes) -> Result<Index> {
        let d = &*data;
        ensure!(d.len() >= HEADER && &d[..8] == MAGIC, "bad magic");
        let field32 = |i: usize| u32_at(d, 8 + 4 * i).unwrap_or(0) as usize;
        let field64 = |i: usize| u64_at(d, 28 + 8 * i).unwrap_or(u64::MAX);
        let offset = |i: usize| field64(2 + i) as usize;
        if field32(0) != VERSION as usize {
            bail!("index version {} (this greppy reads {VERSION})", field32(0));
        }
        let (files, trigrams, unindexed, never) = (field32(1), field32(2), field32(3), field32(4));
        let (path_ends, paths, sizes, unindexed_at) = (offset(0), offset(1), offset(2), offset(3));
        let (never_at, block_starts, blocks) = (offset(4), offset(5), offset(6));
        let (table, postings, masks) = (offset(7), offset(8), offset(9));
        let (kept_at, frames_at, content, total) = (offset(10), offset(11), offset(12), offset(13));
        ensure!(
            total == d.len(),
            "length {} where the header says {total}",
            d.len()
        );
        // Each section lies inside the file.
        let ends = [
            (path_ends, files.checked_mul(8)),
            (sizes, files.checked_mul(8)),
            (unindexed_at, unindexed.checked_mul(4)),
            (never_at, never.checked_mul(4)),
            (
                block_starts,
                files.checked_add(1).and_then(|n| n.checked_mul(4)),
            ),
            (table, trigrams.checked_mul(TABLE_ENTRY)),
            (kept_at, files.checked_add(1).and_then(|n| n.checked_mul(8))),
        ];
        for (start, len) in ends {
            let end = len.and_then(|l| start.checked_add(l));
            ensure!(
                end.is_some_and(|e| e <= d.len()),
                "a section runs past the end"
            );
        }
        ensure!(
            paths <= d.len() && postings <= masks && masks <= kept_at && content <= d.len(),
            "a section runs past the end"
        );
        // Ids (or bitmaps) in whole words of 4 bytes. (Where each list
        // lies in them and in the masks is checked as it is read.)
        ensure!(
            (masks - postings) % 4 == 0,
            "the postings are not whole ids"
        );
        let idx = Index {
            built_at: field64(0),
            source_bytes: field64(1),
            data,
            files,
            trigrams,
            unindexed,
            never,
            path_ends,
            paths,
            sizes,
            unindexed_at,
            never_at,
            block_starts,
            blocks,
            table,
            postings,
            masks,
            kept_at,
            frames_at,
            content,
        };
        // The block starts must rise, and their records lie before the
        // table.
        let mut prev = 0;
        for i in 0..=files {
            let b = u32_at(&idx.data, block_starts + 4 * i).unwrap_or(u32::MAX) as usize;
            ensure!(b >= prev, "bad block table");
            prev = b;
        }
        ensure!(
            prev.checked_mul(BLOCK_RECORD)
                .and_then(|n| n.checked_add(blocks))
                .is_some_and(|e| e <= table),
            "the blocks run past their section"
        );
        // A frame start per block, then the content. (Where the copies
        // lie in it is checked as they are read.)
        ensure!(
            prev.checked_mul(8)
                .and_then(|n| n.checked_add(frames_at))
                .is_some_and(|e| e == content)
                && kept_at + 8 * (files + 1) == frames_at,
            "the copies' tables do not match the blocks"
        );
        // The path ends must rise and stay inside the path bytes.
        let mut prev = 0;
        for i in 0..files {
            let e = u64_at(&idx.data, path_ends + 8 * i).unwrap_or(u64::MAX) as usize;
            ensure!(
                e >= prev
                    && idx
                        .paths
                        .checked_add(e)
                        .is_some_and(|x| x <= idx.data.len()),
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

    /// The `kept` word of file `id` (or, past the last, the content's
    /// length).
    fn kept_word(&self, id: usize) -> u64 {
        u64_at(&self.data, self.kept_at + 8 * id).unwrap_or(0)
    }

    /// Where file `id`'s copy lies in the content, if the index keeps one.
    fn kept_span(&self, id: usize) -> Option<Range<usize>> {
        let word = self.kept_word(id);
        (word & KEPT != 0)
            .then(|| (word & !KEPT) as usize..(self.kept_word(id + 1) & !KEPT) as usize)
    }

    /// Whether the index keeps a copy of file `id` ([`Index::kept`]).
    pub fn keeps(&self, id: usize) -> bool {
        self.kept_word(id) & KEPT != 0
    }

    /// Where block `b`'s frame starts in the content.
    fn frame(&self, b: usize) -> usize {
        u64_at(&self.data, self.frames_at + 8 * b).unwrap_or(0) as usize
    }

    /// File `id`'s copy (blocks `blocks`) as [`Parts`] holds it.
    fn kept_parts(&self, id: usize, blocks: Range<usize>) -> Option<FileKept<'_>> {
        let span = self.kept_span(id)?;
        let bytes = self
            .data
            .get(self.content + span.start..self.content + span.end)?;
        let frames = blocks
            .map(|b| u32::try_from(self.frame(b).checked_sub(span.start)?).ok())
            .collect::<Option<Vec<u32>>>()?;
        Some((bytes, std::borrow::Cow::Owned(frames)))
    }

    /// Bytes `range` of file `id` as it was indexed, from the copy the
    /// index keeps: all of it, or whole blocks of it (as
    /// [`Index::regions`] gives them). `None` if the index keeps no copy,
    /// or `range` is not so (or the copy is damaged): read the file.
    pub fn kept(&self, id: usize, range: Range<u64>) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let len = self.kept_into(id, range, &mut out)?;
        out.truncate(len);
        Some(out)
    }

    /// What [`Index::kept`] gives, written at the start of `out` (which is
    /// grown as needed and never shrunk, so that a buffer kept for the next
    /// read is neither allocated nor cleared again); how many bytes.
    pub fn kept_into(&self, id: usize, range: Range<u64>, out: &mut Vec<u8>) -> Option<usize> {
        let span = self.kept_span(id)?;
        let size = self.size(id);
        let frame = |from: usize, to: usize| {
            let (a, b) = (
                self.content.checked_add(from)?,
                self.content.checked_add(to)?,
            );
            self.data
                .get(a..b.min(self.content.saturating_add(span.end)))
        };
        let blocks = self.block_range(id);
        if blocks.is_empty() {
            if range.end > size || range.start > range.end {
                return None;
            }
            decompress_at(out, 0, frame(span.start, span.end)?, size as usize)?;
            let (start, end) = (range.start as usize, range.end as usize);
            out.copy_within(start..end, 0);
            return Some(end - start);
        }
        // The first block of the range, then each up to its end.
        let (mut first, mut hi) = (blocks.start, blocks.end);
        while first < hi {
            let mid = first + (hi - first) / 2;
            if self.block(mid).0 < range.start {
                first = mid + 1;
            } else {
                hi = mid;
            }
        }
        let mut at = range.start;
        for b in first..blocks.end {
            if at >= range.end {
                break;
            }
            let (start, end) = (self.block(b).0, self.block_end(b, &blocks, size));
            if start != at || end > range.end {
                return None;
            }
            let to = if b + 1 < blocks.end {
                self.frame(b + 1)
            } else {
                span.end
            };
            let len = usize::try_from(end.checked_sub(start)?).ok()?;
            let done = usize::try_from(at - range.start).ok()?;
            decompress_at(out, done, frame(self.frame(b), to)?, len)?;
            at = end;
        }
        (at == range.end).then(|| (range.end - range.start) as usize)
    }

    /// Where block `b` (of the file whose blocks are `blocks`, of `size`
    /// bytes) ends.
    fn block_end(&self, b: usize, blocks: &Range<usize>, size: u64) -> u64 {
        if b + 1 < blocks.end {
            self.block(b + 1).0
        } else {
            size
        }
    }

    /// The numbers of file `id`'s blocks.
    fn block_range(&self, id: usize) -> Range<usize> {
        let at = |i: usize| u32_at(&self.data, self.block_starts + 4 * i).unwrap_or(0) as usize;
        at(id)..at(id + 1)
    }

    /// Block `b`: (offset, line).
    fn block(&self, b: usize) -> (u64, u64) {
        let r = self.blocks + b * 16;
        let offset = u64_at(&self.data, r).unwrap_or(0);
        let line = u64_at(&self.data, r + 8).unwrap_or(1);
        (offset, line)
    }

    /// The filters of the blocks `range` (one file's).
    fn filters(&self, range: Range<usize>) -> Filters<'_> {
        let all = u32_at(&self.data, self.block_starts + 4 * self.files).unwrap_or(0) as usize;
        let at = self.blocks + 16 * all + BLOOM * range.start;
        let n = range.len();
        let bytes = self.data.get(at..at + BLOOM * n).unwrap_or_default();
        Filters { bytes, n }
    }

    /// The parts of file `id` that may hold a match of `test`'s query,
    /// adjacent ones joined; `None` if the file has no blocks (read it
    /// whole).
    pub fn regions(&self, id: usize, test: &BlockTest<'_>) -> Option<Regions> {
        let range = self.block_range(id);
        if range.is_empty() {
            return None;
        }
        let size = self.size(id);
        let filters = self.filters(range.clone());
        let admitted: Vec<usize> = match test.mask() {
            Some(m) => filters.having_all(m),
            None => (0..range.len())
                .filter(|&j| test.query.admits(&|t, n| filters.has(j, t, n)))
                .collect(),
        };
        let mut out: Vec<Region> = Vec::new();
        for b in admitted.into_iter().map(|j| range.start + j) {
            let (offset, line) = self.block(b);
            let end = if b + 1 < range.end {
                self.block(b + 1).0
            } else {
                size
            };
            match out.last_mut() {
                Some(last) if last.end == offset => last.end = end,
                _ => out.push(Region {
                    start: offset,
                    end,
                    line,
                }),
            }
        }
        Some(Regions { size, parts: out })
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

    /// The `count` file ids at byte `at` (the unindexed or the never
    /// matching files: plain ids, not a posting list).
    fn ids(&self, at: usize, count: usize) -> Vec<u32> {
        (0..count)
            .filter_map(|i| u32_at(&self.data, at + 4 * i))
            .filter(|&id| (id as usize) < self.files)
            .collect()
    }

    /// Field `k` of table entry `i` ([`TABLE_ENTRY`]).
    fn field(&self, i: usize, k: usize) -> u32 {
        u32_at(&self.data, self.table + TABLE_ENTRY * i + 4 * k).unwrap_or(0)
    }

    /// Table entry `i`: the trigram and its posting list.
    fn entry(&self, i: usize) -> (Trigram, List<'_>) {
        let f = |k: usize| self.field(i, k) as usize;
        (self.field(i, 0), self.list(f(1), f(2), 4 * f(3)))
    }

    /// The posting list of `count` files whose masks start at posting
    /// `first` and whose ids at byte `ids_at` of the postings; laid out
    /// as [`dense`] says. A list the file does not hold whole reads as
    /// what it holds.
    fn list(&self, first: usize, count: usize, ids_at: usize) -> List<'_> {
        let dense = dense(count, self.files);
        let len = list_bytes(count, self.files);
        let within = |start: usize, len: usize, end: usize| {
            let start = start.min(end);
            self.data
                .get(start..(start + len).min(end))
                .unwrap_or_default()
        };
        List {
            ids: within(self.postings + ids_at, len, self.masks),
            masks: within(self.masks + first, count, self.kept_at),
            dense,
            files: self.files,
        }
    }

    /// The posting list of `t` (empty if no file has it).
    fn lookup(&self, t: Trigram) -> List<'_> {
        let (mut lo, mut hi) = (0, self.trigrams);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.field(mid, 0).cmp(&t) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return self.entry(mid).1,
            }
        }
        List::EMPTY
    }

    /// The ids of the files `q` lets through, sorted; `None` for all.
    fn eval(&self, q: &Query) -> Option<Vec<u32>> {
        match q {
            Query::All => None,
            Query::Tri(t) => Some(self.lookup(*t).ids_with(0)),
            Query::Next(t, b) => Some(self.lookup(*t).ids_with(next_bit(*b))),
            Query::And(qs) => {
                // The rarest trigrams first: the intersection shrinks
                // fastest, and an empty one ends the work.
                // A trigram that must be followed by a byte is looked up
                // once, as that: the bare trigram adds nothing.
                let followed =
                    |t: &Trigram| qs.iter().any(|q| matches!(q, Query::Next(n, _) if n == t));
                let mut order: Vec<(Option<List<'_>>, &Query)> = qs
                    .iter()
                    .filter(|q| !matches!(q, Query::Tri(t) if followed(t)))
                    .map(|q| match q {
                        Query::Tri(t) | Query::Next(t, _) => (Some(self.lookup(*t)), q),
                        _ => (None, q),
                    })
                    .collect();
                order.sort_unstable_by_key(|(list, _)| list.as_ref().map_or(usize::MAX, List::len));
                let mut acc: Option<Vec<u32>> = None;
                for (list, q) in order {
                    // Once there is a set, each further posting list is
                    // walked where it lies (galloping), not decoded.
                    let bit = match q {
                        Query::Tri(_) => Some(0),
                        Query::Next(_, b) => Some(next_bit(*b)),
                        _ => None,
                    };
                    if let (Some(a), Some(bit), Some(list)) = (&mut acc, bit, &list) {
                        list.retain(a, bit);
                        if a.is_empty() {
                            break;
                        }
                        continue;
                    }
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

    /// The ids of the files that may match `q`, in path order: what the
    /// plan lets through, and every file the index does not speak for.
    pub fn candidate_ids(&self, q: &Query) -> Vec<u32> {
        match self.eval(q) {
            None => {
                let never = self.ids(self.never_at, self.never);
                (0..self.files as u32)
                    .filter(|id| never.binary_search(id).is_err())
                    .collect()
            }
            Some(ids) => union(&ids, &self.ids(self.unindexed_at, self.unindexed)),
        }
    }

    /// The files that may match `q`, in path order.
    pub fn candidates(&self, q: &Query) -> Vec<&Path> {
        self.candidate_ids(q)
            .into_iter()
            .map(|i| self.file(i as usize))
            .collect()
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

/// A set at least a list's length over this is intersected with it by a
/// merge, not by galloping.
const MERGE_FROM: usize = 4;

/// A posting list laid out densely ([`dense`]) takes this many bytes per
/// 64 files: the bitmap's word, then how many postings come before it.
const DENSE_GROUP: usize = 12;

/// Whether a posting list of `count` of an index's `files` is laid out as
/// a bitmap of the files (with each word's rank, for the masks) instead of
/// their ids: when that takes fewer bytes, from about one file in 21 on.
/// A set of candidates is then tested against it one bit each, with no
/// search, no branch and no load that waits on another.
fn dense(count: usize, files: usize) -> bool {
    DENSE_GROUP * files.div_ceil(64) < 4 * count
}

/// One trigram's posting list, as the index lays it out: its ids (or its
/// bitmap, if [`dense`]) and a mask per posting.
#[derive(Clone, Copy)]
struct List<'a> {
    ids: &'a [u8],
    masks: &'a [u8],
    dense: bool,
    files: usize,
}

impl<'a> List<'a> {
    const EMPTY: List<'static> = List {
        ids: &[],
        masks: &[],
        dense: false,
        files: 0,
    };

    /// How many files it holds.
    fn len(&self) -> usize {
        self.masks.len()
    }

    /// Its files in id order, each with its mask.
    fn postings(self) -> impl Iterator<Item = (u32, u8)> + 'a {
        let files = self.files;
        let masks = self.masks.iter().copied();
        let (sparse, dense) = if self.dense {
            (&[][..], self.ids)
        } else {
            (self.ids, &[][..])
        };
        let sparse = sparse
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let dense = dense
            .chunks_exact(DENSE_GROUP)
            .enumerate()
            .flat_map(|(g, b)| {
                let mut word = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
                std::iter::from_fn(move || {
                    (word != 0).then(|| {
                        let id = 64 * g as u32 + word.trailing_zeros();
                        word &= word - 1;
                        id
                    })
                })
            });
        sparse
            .chain(dense)
            .zip(masks)
            .filter(move |&(id, _)| (id as usize) < files)
    }

    /// Its ids whose mask has `bit` (all, for 0): what [`List::postings`]
    /// gives, in a loop of its own for each layout (the first list of
    /// every search is read whole).
    fn ids_with(self, bit: u8) -> Vec<u32> {
        let keep = |id: u32, m: u8| (bit == 0 || m & bit != 0) && (id as usize) < self.files;
        let mut out = Vec::with_capacity(self.masks.len());
        if self.dense {
            let mut masks = self.masks.iter();
            for (g, b) in self.ids.chunks_exact(DENSE_GROUP).enumerate() {
                let mut word = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
                while word != 0 {
                    let id = 64 * g as u32 + word.trailing_zeros();
                    word &= word - 1;
                    let Some(&m) = masks.next() else {
                        return out;
                    };
                    if keep(id, m) {
                        out.push(id);
                    }
                }
            }
        } else {
            for (b, &m) in self.ids.chunks_exact(4).zip(self.masks) {
                let id = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                if keep(id, m) {
                    out.push(id);
                }
            }
        }
        out
    }

    /// Keeps the ids of `a` (sorted) that the list holds with `bit` in
    /// their mask (any mask, for 0): bit by bit in a bitmap; by a merge
    /// when `a` is about as long as a list of ids, else by galloping.
    fn retain(&self, a: &mut Vec<u32>, bit: u8) {
        if self.dense {
            retain_dense(a, self.ids, self.masks, bit);
        } else if a.len().saturating_mul(MERGE_FROM) >= self.ids.len() / 4 {
            retain_merging(a, self.ids, self.masks, bit);
        } else {
            retain_galloping(a, self.ids, self.masks, bit);
        }
    }
}

/// What [`retain_merging`] keeps, from a bitmap (`groups` as [`dense`]
/// lays them out): a bit for each id of `a`, and for a mask, the word's
/// rank and a count of the bits below the id's.
fn retain_dense(a: &mut Vec<u32>, groups: &[u8], masks: &[u8], bit: u8) {
    a.retain(|&id| {
        let (g, b) = (id as usize / 64, id % 64);
        let Some(group) = groups.get(DENSE_GROUP * g..DENSE_GROUP * (g + 1)) else {
            return false;
        };
        let word = u64::from_le_bytes([
            group[0], group[1], group[2], group[3], group[4], group[5], group[6], group[7],
        ]);
        if word & (1 << b) == 0 {
            return false;
        }
        if bit == 0 {
            return true;
        }
        let rank = u32::from_le_bytes([group[8], group[9], group[10], group[11]]) as usize;
        let k = rank + (word & ((1 << b) - 1)).count_ones() as usize;
        masks.get(k).is_none_or(|m| m & bit != 0)
    });
}

/// Id `k` of a posting list's bytes.
fn posting(ids: &[u8], k: usize) -> u32 {
    let b = &ids[4 * k..4 * k + 4];
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// Keeps the ids of `a` (sorted) that the posting list `ids` (its bytes,
/// with `masks`, one per id, or none) holds with `bit` in their mask (any
/// mask, for 0), by walking both: no branch on which side moves on.
fn retain_merging(a: &mut Vec<u32>, ids: &[u8], masks: &[u8], bit: u8) {
    let count = ids.len() / 4;
    let (mut i, mut k, mut kept) = (0usize, 0usize, 0usize);
    while i < a.len() && k < count {
        let (x, y) = (a[i], posting(ids, k));
        if x == y && (bit == 0 || masks.get(k).is_none_or(|m| m & bit != 0)) {
            a[kept] = x;
            kept += 1;
        }
        i += usize::from(x <= y);
        k += usize::from(y <= x);
    }
    a.truncate(kept);
}

/// What [`retain_merging`] keeps, seeking each id of `a` by galloping from
/// where the last one was found: a few probes per id when `a` is short
/// beside the list.
fn retain_galloping(a: &mut Vec<u32>, ids: &[u8], masks: &[u8], bit: u8) {
    let count = ids.len() / 4;
    let get = |k: usize| posting(ids, k);
    let mut lo = 0usize;
    a.retain(|&id| {
        // Gallop: widen [lo, hi) until `hi` is past the end or holds an
        // id not below `id`.
        let mut step = 1usize;
        let mut hi = lo;
        while hi < count && get(hi) < id {
            lo = hi + 1;
            hi = lo.saturating_add(step).min(count);
            step = step.saturating_mul(2);
        }
        // The first position in [lo, hi) not below `id` (or `hi`).
        let mut h = hi.min(count);
        while lo < h {
            let mid = lo + (h - lo) / 2;
            if get(mid) < id {
                lo = mid + 1;
            } else {
                h = mid;
            }
        }
        lo < count && get(lo) == id && (bit == 0 || masks.get(lo).is_none_or(|m| m & bit != 0))
    });
}

/// The index (with its copies) is kept within this share of its files'
/// bytes: past it, copies are left out, the largest files' first.
const WITHIN: f64 = 0.9;

/// Leaves out the copies that would take the index past [`WITHIN`] its
/// files' bytes, the largest files' first: a copy saves a search the same
/// opening and closing whatever the file's size, so the small files'
/// copies save the most for their bytes. (Trees of source alone take
/// about 0.7x their bytes in trigrams; with every copy, 1.07x.)
fn fit_copies(p: &mut Parts<'_>) {
    let budget = (p.sizes.iter().sum::<u64>() as f64 * WITHIN) as usize;
    let mut total = serialize_layout(p).content;
    let mut kept: Vec<usize> = (0..p.kept.len()).filter(|&i| p.kept[i].is_some()).collect();
    kept.sort_by_key(|&i| (p.sizes[i], i));
    for i in kept {
        let len = p.kept[i].as_ref().map_or(0, |(b, _)| b.len());
        if total + len <= budget {
            total += len;
        } else {
            p.kept[i] = None;
        }
    }
}

/// Where [`serialize`] puts the sections that come before the copies
/// (whose bytes start at `content`).
struct Layout {
    path_bytes: usize,
    postings_len: usize,
    ids_len: usize,
    nblocks: usize,
    content: usize,
}

fn serialize_layout(p: &Parts<'_>) -> Layout {
    let path_bytes: usize = p.files.iter().map(|p| p.as_os_str().len()).sum();
    let postings_len = p.table.ids.len();
    let files = p.files.len();
    let ids_len = p
        .table
        .starts
        .windows(2)
        .map(|w| list_bytes((w[1] - w[0]) as usize, files))
        .sum();
    let nblocks: usize = p.blocks.iter().map(|(r, _)| r.len()).sum();
    let content = HEADER
        + 8 * p.files.len()
        + path_bytes
        + 8 * p.files.len()
        + 4 * (p.unindexed.len() + p.never.len())
        + 4 * (p.files.len() + 1)
        + BLOCK_RECORD * nblocks
        + TABLE_ENTRY * p.table.trigrams.len()
        + ids_len
        + postings_len
        + 8 * (p.files.len() + 1)
        + 8 * nblocks;
    Layout {
        path_bytes,
        postings_len,
        ids_len,
        nblocks,
        content,
    }
}

fn serialize(p: &Parts<'_>) -> Vec<u8> {
    let Layout {
        path_bytes,
        postings_len,
        ids_len,
        nblocks,
        content: laid_out,
    } = serialize_layout(p);
    let path_ends = HEADER;
    let paths = path_ends + 8 * p.files.len();
    let sizes = paths + path_bytes;
    let unindexed_at = sizes + 8 * p.files.len();
    let never_at = unindexed_at + 4 * p.unindexed.len();
    let block_starts = never_at + 4 * p.never.len();
    let blocks_at = block_starts + 4 * (p.files.len() + 1);
    let table_at = blocks_at + BLOCK_RECORD * nblocks;
    let postings = table_at + TABLE_ENTRY * p.table.trigrams.len();
    let masks = postings + ids_len;
    let kept_at = masks + postings_len;
    let frames_at = kept_at + 8 * (p.files.len() + 1);
    let content = frames_at + 8 * nblocks;
    debug_assert_eq!(content, laid_out);
    let content_len: usize = p.kept.iter().flatten().map(|(b, _)| b.len()).sum();
    let total = content + content_len;
    let mut d = Vec::with_capacity(total);
    d.extend_from_slice(MAGIC);
    for v in [
        VERSION,
        p.files.len() as u32,
        p.table.trigrams.len() as u32,
        p.unindexed.len() as u32,
        p.never.len() as u32,
    ] {
        d.extend_from_slice(&v.to_le_bytes());
    }
    d.extend_from_slice(&p.built_at.to_le_bytes());
    d.extend_from_slice(&p.sizes.iter().sum::<u64>().to_le_bytes());
    for v in [
        path_ends,
        paths,
        sizes,
        unindexed_at,
        never_at,
        block_starts,
        blocks_at,
        table_at,
        postings,
        masks,
        kept_at,
        frames_at,
        content,
        total,
    ] {
        d.extend_from_slice(&(v as u64).to_le_bytes());
    }
    let mut end = 0u64;
    for f in &p.files {
        end += f.as_os_str().len() as u64;
        d.extend_from_slice(&end.to_le_bytes());
    }
    for f in &p.files {
        d.extend_from_slice(f.as_os_str().as_bytes());
    }
    for s in &p.sizes {
        d.extend_from_slice(&s.to_le_bytes());
    }
    for id in p.unindexed.iter().chain(&p.never) {
        d.extend_from_slice(&id.to_le_bytes());
    }
    let mut n = 0u32;
    d.extend_from_slice(&n.to_le_bytes());
    for (records, _) in &p.blocks {
        n += records.len() as u32;
        d.extend_from_slice(&n.to_le_bytes());
    }
    for (offset, line) in p.blocks.iter().flat_map(|(r, _)| r) {
        d.extend_from_slice(&offset.to_le_bytes());
        d.extend_from_slice(&line.to_le_bytes());
    }
    for (records, filters) in &p.blocks {
        let mut f = filters.to_vec();
        f.resize(records.len() * BLOOM, 0);
        d.extend_from_slice(&f);
    }
    let t = &p.table;
    let files = p.files.len();
    let mut ids_at = 0usize;
    for (i, tri) in t.trigrams.iter().enumerate() {
        let count = t.starts[i + 1] - t.starts[i];
        for v in [*tri, t.starts[i], count, (ids_at / 4) as u32] {
            d.extend_from_slice(&v.to_le_bytes());
        }
        ids_at += list_bytes(count as usize, files);
    }
    for w in t.starts.windows(2) {
        let ids = &t.ids[w[0] as usize..w[1] as usize];
        if dense(ids.len(), files) {
            extend_bitmap(&mut d, ids, files);
        } else {
            extend_u32s(&mut d, ids);
        }
    }
    debug_assert_eq!(d.len(), masks);
    d.extend_from_slice(&t.masks);
    let mut at = 0u64;
    for k in &p.kept {
        let flag = if k.is_some() { KEPT } else { 0 };
        d.extend_from_slice(&(at | flag).to_le_bytes());
        at += k.as_ref().map_or(0, |(b, _)| b.len() as u64);
    }
    d.extend_from_slice(&at.to_le_bytes());
    // A frame start per block; a file kept whole, or not kept, has none
    // of its own.
    let mut at = 0u64;
    for (k, (records, _)) in p.kept.iter().zip(&p.blocks) {
        let frames = k.as_ref().map(|(_, f)| &**f).unwrap_or_default();
        for j in 0..records.len() {
            let f = frames.get(j).map_or(0, |&f| u64::from(f));
            d.extend_from_slice(&(at + f).to_le_bytes());
        }
        at += k.as_ref().map_or(0, |(b, _)| b.len() as u64);
    }
    for (b, _) in p.kept.iter().flatten() {
        d.extend_from_slice(b);
    }
    debug_assert_eq!(d.len(), total);
    d
}

/// The bytes of the ids of a posting list of `count` of `files` files.
fn list_bytes(count: usize, files: usize) -> usize {
    if dense(count, files) {
        DENSE_GROUP * files.div_ceil(64)
    } else {
        4 * count
    }
}

/// Appends the bitmap of `ids` (ascending, below `files`) as [`dense`]
/// lays it out.
fn extend_bitmap(d: &mut Vec<u8>, ids: &[u32], files: usize) {
    let mut words = vec![0u64; files.div_ceil(64)];
    for &id in ids {
        words[id as usize / 64] |= 1 << (id % 64);
    }
    d.reserve(DENSE_GROUP * words.len());
    let mut rank = 0u32;
    for w in words {
        d.extend_from_slice(&w.to_le_bytes());
        d.extend_from_slice(&rank.to_le_bytes());
        rank += w.count_ones();
    }
}

/// Appends `v` as little-endian bytes.
fn extend_u32s(d: &mut Vec<u8>, v: &[u32]) {
    d.reserve(4 * v.len());
    for chunk in v.chunks(1 << 12) {
        let mut buf = [0u8; 4 << 12];
        for (b, x) in buf.chunks_exact_mut(4).zip(chunk) {
            b.copy_from_slice(&x.to_le_bytes());
        }
        d.extend_from_slice(&buf[..4 * chunk.len()]);
    }
}

/// The posting lists of an index as it lays them out: the trigrams in
/// order, and for trigram `i` the files `ids[starts[i]..starts[i + 1]]`
/// (ascending) with the masks of the bytes after it in each.
#[derive(Debug)]
struct Postings {
    trigrams: Vec<Trigram>,
    starts: Vec<u32>,
    ids: Vec<u32>,
    masks: Vec<u8>,
}

/// [`Postings::invert`] splits the trigrams by their top bits into this many
/// ranges, inverted in parallel.
const SHARD_BITS: u32 = 6;
/// The bits of a trigram below its shard's.
const LOW_BITS: u32 = 24 - SHARD_BITS;
/// A trigram's bits below its shard's.
const LOW_MASK: u32 = (1 << LOW_BITS) - 1;
/// A shard with more postings than this is counted in a dense table (a
/// MiB); one with fewer is sorted.
const DENSE_SHARD_FROM: usize = 1 << 14;

impl Postings {
    fn with_capacity(trigrams: usize, postings: usize) -> Postings {
        let mut starts = Vec::with_capacity(trigrams + 1);
        starts.push(0);
        Postings {
            trigrams: Vec::with_capacity(trigrams),
            starts,
            ids: Vec::with_capacity(postings),
            masks: Vec::with_capacity(postings),
        }
    }

    /// Adds trigram `t` (past every trigram so far) with its files; a
    /// trigram with none is left out.
    fn push(&mut self, t: Trigram, files: Vec<(u32, u8)>) {
        if files.is_empty() {
            return;
        }
        self.trigrams.push(t);
        for (id, m) in files {
            self.ids.push(id);
            self.masks.push(m);
        }
        self.starts.push(self.ids.len() as u32);
    }

    /// The posting lists of `lists` (file `i`'s trigrams, sorted, with their
    /// masks). Each range of trigrams ([`SHARD_BITS`]) is counted, then
    /// filled, on its own thread, straight into its part of the flat
    /// arrays: no list of its own per trigram.
    fn invert(lists: &[&[(Trigram, u8)]]) -> Postings {
        let shards = 1usize << SHARD_BITS;
        // Where each shard's trigrams start in each file's list: a row of
        // `shards + 1` per file, in one table.
        let row = shards + 1;
        let mut bounds = vec![0u32; lists.len() * row];
        bounds
            .par_chunks_mut(row)
            .zip(lists.par_iter())
            .for_each(|(b, l)| {
                for (s, at) in b.iter_mut().enumerate() {
                    *at = l.partition_point(|e| (e.0 >> LOW_BITS) < s as u32) as u32;
                }
            });
        let part = |f: usize, s: usize| {
            let b = &bounds[f * row..(f + 1) * row];
            &lists[f][b[s] as usize..b[s + 1] as usize]
        };
        // Per shard: its trigrams and how many files each has.
        let counted: Vec<(Vec<Trigram>, Vec<u32>)> = (0..shards)
            .into_par_iter()
            .map(|s| {
                let n: usize = (0..lists.len()).map(|f| part(f, s).len()).sum();
                if n <= DENSE_SHARD_FROM {
                    // Few: sorted, with no table to clear (a small tree's
                    // build touches no megabytes).
                    let mut lows: Vec<u32> = (0..lists.len())
                        .flat_map(|f| part(f, s).iter().map(|e| e.0))
                        .collect();
                    lows.sort_unstable();
                    return lows
                        .chunk_by(|a, b| a == b)
                        .map(|run| (run[0], run.len() as u32))
                        .unzip();
                }
                let mut counts = vec![0u32; 1 << LOW_BITS];
                for f in 0..lists.len() {
                    for e in part(f, s) {
                        counts[(e.0 & LOW_MASK) as usize] += 1;
                    }
                }
                let mut tris = Vec::new();
                let mut ns = Vec::new();
                for (low, &n) in counts.iter().enumerate() {
                    if n > 0 {
                        tris.push(((s as u32) << LOW_BITS) | low as u32);
                        ns.push(n);
                    }
                }
                (tris, ns)
            })
            .collect();
        let total: usize = counted
            .iter()
            .flat_map(|(_, ns)| ns)
            .map(|&n| n as usize)
            .sum();
        let mut ids = vec![0u32; total];
        let mut masks = vec![0u8; total];
        // Each shard's part of the flat arrays.
        let mut parts = Vec::with_capacity(shards);
        let (mut id_rest, mut mask_rest) = (&mut ids[..], &mut masks[..]);
        for (s, (_, ns)) in counted.iter().enumerate() {
            let n: usize = ns.iter().map(|&n| n as usize).sum();
            let (i, ir) = id_rest.split_at_mut(n);
            let (m, mr) = mask_rest.split_at_mut(n);
            parts.push((s, i, m));
            (id_rest, mask_rest) = (ir, mr);
        }
        parts.into_par_iter().for_each(|(s, ids, masks)| {
            let (tris, ns) = &counted[s];
            // The shard's postings: sorted if they were counted by a sort.
            if ids.len() <= DENSE_SHARD_FROM {
                // In trigram order, each trigram's files in id order (the
                // sort is stable).
                let mut all: Vec<(Trigram, u32, u8)> = (0..lists.len())
                    .flat_map(|f| part(f, s).iter().map(move |e| (e.0, f as u32, e.1)))
                    .collect();
                all.sort_by_key(|e| e.0);
                for ((id, mask), (_, f, m)) in ids.iter_mut().zip(masks.iter_mut()).zip(all) {
                    (*id, *mask) = (f, m);
                }
                return;
            }
            // Where the next file of each trigram goes.
            let mut next = vec![0u32; 1 << LOW_BITS];
            let mut at = 0u32;
            for (t, n) in tris.iter().zip(ns) {
                next[(t & LOW_MASK) as usize] = at;
                at += n;
            }
            for f in 0..lists.len() {
                for e in part(f, s) {
                    let slot = &mut next[(e.0 & LOW_MASK) as usize];
                    ids[*slot as usize] = f as u32;
                    masks[*slot as usize] = e.1;
                    *slot += 1;
                }
            }
        });
        let mut out = Postings {
            trigrams: Vec::new(),
            starts: vec![0],
            ids,
            masks,
        };
        let mut at = 0u32;
        for (tris, ns) in counted {
            out.trigrams.extend(tris);
            for n in ns {
                at += n;
                out.starts.push(at);
            }
        }
        out
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
