//! The files' copies the index keeps, in LZ4 frames (one per block of a
//! file with blocks), read a block at a time.

use super::blocks::Block;
use super::{FileEntry, Index, KEPT, u64_at};
use std::ops::Range;
use std::sync::Arc;

impl Index {
    /// The `kept` word of file `id` (or, past the last, the content's
    /// length).
    pub(super) fn kept_word(&self, id: usize) -> u64 {
        u64_at(&self.data, self.kept_at + 8 * id).unwrap_or(0)
    }

    /// Where file `id`'s copy lies in the content, if the index keeps one.
    pub(super) fn kept_span(&self, id: usize) -> Option<Range<usize>> {
        let word = self.kept_word(id);
        (word & KEPT != 0)
            .then(|| (word & !KEPT) as usize..(self.kept_word(id + 1) & !KEPT) as usize)
    }

    /// Whether the index keeps a copy of file `id` ([`Index::kept`]).
    pub fn keeps(&self, id: usize) -> bool {
        self.kept_word(id) & KEPT != 0
    }

    /// Where block `b`'s frame starts in the content.
    pub(super) fn frame(&self, b: usize) -> usize {
        u64_at(&self.data, self.frames_at + 8 * b).unwrap_or(0) as usize
    }

    /// File `id`'s copy (blocks `blocks`) as [`Parts`] holds it.
    pub(super) fn kept_parts(&self, id: usize, blocks: Range<usize>) -> Option<FileKept<'_>> {
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
    pub(super) fn of(text: &[u8], blocks: &[Block]) -> Option<Kept> {
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
pub(super) fn compress_onto(out: &mut Vec<u8>, input: &[u8]) -> Option<()> {
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
pub(super) fn decompress_at(out: &mut Vec<u8>, at: usize, frame: &[u8], len: usize) -> Option<()> {
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

/// A file's copy as [`Parts`] holds it.
pub(super) type FileKept<'a> = (&'a [u8], std::borrow::Cow<'a, [u32]>);

/// An entry's copy as [`Parts`] holds it.
pub(super) fn entry_kept(e: &FileEntry) -> Option<FileKept<'_>> {
    e.kept
        .as_ref()
        .map(|k| (&*k.bytes, std::borrow::Cow::Borrowed(&*k.frames)))
}
