//! A large file's blocks: whole lines, about `BLOCK` bytes each, with a
//! Bloom filter of each block's trigrams, so that a candidate file is read
//! only where its blocks may hold a match.

use super::{FileBlocks, FileEntry, Index, Region, Regions, u32_at, u64_at};
use crate::plan::{Query, Trigram, trigram};
use std::ops::Range;

impl Index {
    /// Where block `b` (of the file whose blocks are `blocks`, of `size`
    /// bytes) ends.
    pub(super) fn block_end(&self, b: usize, blocks: &Range<usize>, size: u64) -> u64 {
        if b + 1 < blocks.end {
            self.block(b + 1).0
        } else {
            size
        }
    }

    /// The numbers of file `id`'s blocks.
    pub(super) fn block_range(&self, id: usize) -> Range<usize> {
        let at = |i: usize| u32_at(&self.data, self.block_starts + 4 * i).unwrap_or(0) as usize;
        at(id)..at(id + 1)
    }

    /// Block `b`: (offset, line).
    pub(super) fn block(&self, b: usize) -> (u64, u64) {
        let r = self.blocks + b * 16;
        let offset = u64_at(&self.data, r).unwrap_or(0);
        let line = u64_at(&self.data, r + 8).unwrap_or(1);
        (offset, line)
    }

    /// The filters of the blocks `range` (one file's).
    pub(super) fn filters(&self, range: Range<usize>) -> Filters<'_> {
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
}

/// Text files from this size on are cut into blocks. A selective search's
/// candidates are mostly files of a few blocks: with blocks of 16 KiB from
/// 64 KiB on, it read 328 KiB at the median on the benchmark corpus; with
/// these, 82 KiB, for an index 14% larger.
pub const BLOCKED_FROM: u64 = 16 << 10;
/// About how many bytes a block holds (it ends at the end of a line).
pub const BLOCK: usize = 4 << 10;
/// The bytes of a block's Bloom filter: a bit per trigram, and one per
/// trigram with the byte that follows it (a four-byte string).
pub(super) const BLOOM: usize = 512;
/// A block's record: offset, line, filter.
pub(super) const BLOCK_RECORD: usize = 16 + BLOOM;

/// The bits a trigram (or four-byte string) sets in a block's filter: one.
/// A block's few thousand strings set 29% of its 4,096 bits on average on
/// the benchmark corpus with one, 49% with two; with one, the selective
/// queries' blocks are tested in 8.7 against 10.1 µs per query, and read
/// 25.8 against 27.2 KiB.
pub(super) const BLOOM_K: usize = 1;

/// The bit of trigram `t` in a block's filter.
pub(super) fn bloom_bits(t: Trigram) -> [usize; BLOOM_K] {
    hashed_bits(u64::from(t))
}

/// The bit of trigram `t` followed by byte `next` (a four-byte string,
/// ASCII lower case) in a block's filter.
pub(super) fn bloom_bits4(t: Trigram, next: u8) -> [usize; BLOOM_K] {
    hashed_bits((1 << 32) | (u64::from(t) << 8) | u64::from(next.to_ascii_lowercase()))
}

pub(super) fn hashed_bits(key: u64) -> [usize; BLOOM_K] {
    let h = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let m = BLOOM as u64 * 8;
    [((h >> 40) % m) as usize]
}

#[cfg(test)]
pub(super) fn bloom_has(bloom: &[u8], t: Trigram, next: Option<u8>) -> bool {
    let has = |b: &usize| bloom.get(b / 8).is_some_and(|x| x & (1 << (b % 8)) != 0);
    bloom_bits(t).iter().all(has) && next.is_none_or(|n| bloom_bits4(t, n).iter().all(has))
}

/// The filter bits a block must have for `q` to admit it, as (word, bits)
/// pairs of 64-bit words, when `q` asks only for trigrams, all of them (the
/// common case); `None` when it is not so simple. Made once per file, it
/// tests a block with a few word compares, not a walk of the query and two
/// hashes per trigram per block.
pub(super) fn bloom_mask(q: &Query) -> Option<Vec<(usize, u64)>> {
    pub(super) fn add(q: &Query, words: &mut [u64; BLOOM_WORDS]) -> Option<()> {
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
pub(super) const BLOOM_WORDS: usize = BLOOM / 8;

/// How a search tests a file's blocks against its query ([`Index::regions`]):
/// the query, and the filter bits it needs, worked out once per search
/// rather than once per candidate, and only if a candidate has blocks.
#[derive(Debug)]
pub struct BlockTest<'q> {
    pub(super) query: &'q Query,
    pub(super) mask: std::sync::OnceLock<Option<Vec<(usize, u64)>>>,
}

impl<'q> BlockTest<'q> {
    pub fn new(query: &'q Query) -> BlockTest<'q> {
        BlockTest {
            query,
            mask: std::sync::OnceLock::new(),
        }
    }

    pub(super) fn mask(&self) -> Option<&[(usize, u64)]> {
        self.mask.get_or_init(|| bloom_mask(self.query)).as_deref()
    }
}

/// The filters of one file's `n` blocks as the index lays them out: word
/// `w` of block `j` is the `w * n + j`th u64.
#[derive(Clone, Copy)]
pub(super) struct Filters<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) n: usize,
}

impl Filters<'_> {
    pub(super) fn word(&self, j: usize, w: usize) -> u64 {
        u64_at(self.bytes, 8 * (w * self.n + j)).unwrap_or(0)
    }

    /// Whether block `j`'s filter has every bit of `mask` ([`bloom_mask`]).
    pub(super) fn has_all(&self, j: usize, mask: &[(usize, u64)]) -> bool {
        mask.iter().all(|&(w, bits)| self.word(j, w) & bits == bits)
    }

    /// The blocks whose filters have every bit of `mask`, in order: the
    /// word with the most bits is read for every block, in one pass along
    /// its column; only the blocks it lets through are tested further.
    pub(super) fn having_all(&self, mask: &[(usize, u64)]) -> Vec<usize> {
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
    pub(super) fn has(&self, j: usize, t: Trigram, next: Option<u8>) -> bool {
        let has = |b: &usize| self.word(j, b / 64) & (1 << (b % 64)) != 0;
        bloom_bits(t).iter().all(has) && next.is_none_or(|n| bloom_bits4(t, n).iter().all(has))
    }
}

/// An entry's blocks as [`Parts`] holds them.
pub(super) fn entry_blocks(e: &FileEntry) -> FileBlocks<'static> {
    let blooms: Vec<&[u8]> = e.blocks.iter().map(|b| &*b.bloom).collect();
    let records = e.blocks.iter().map(|b| (b.offset, b.line)).collect();
    (records, std::borrow::Cow::Owned(transpose(&blooms)))
}

/// `blooms` (one filter per block, in order) laid out word by word
/// ([`Filters`]).
pub(super) fn transpose(blooms: &[&[u8]]) -> Vec<u8> {
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
pub(super) fn block_spans(text: &[u8]) -> Vec<(usize, usize, u64)> {
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
pub(super) fn bloom_add(bloom: &mut [u64; BLOOM_WORDS], t: Trigram, next: Option<u8>) {
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
pub(super) fn bloom_bytes(bloom: &[u64; BLOOM_WORDS]) -> Box<[u8]> {
    bloom.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The blocks of `text` ([`block_spans`]), each with the filter of its
/// trigrams.
pub(super) fn blocks_of(text: &[u8]) -> Vec<Block> {
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
