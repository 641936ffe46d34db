//! Building an index: each file's trigrams with the masks of the bytes after
//! them, its blocks and its kept copy, then the postings; and merging
//! changed files into an index without reading the unchanged ones.

use super::blocks::{
    BLOCKED_FROM, BLOOM_WORDS, Block, block_spans, blocks_of, bloom_add, bloom_bytes, entry_blocks,
};
use super::kept::{Kept, entry_kept};
use super::layout::{Parts, Postings, serialize, serialize_layout};
use super::{Bytes, FileEntry, Index, MAX_INDEXED, NEVER_MATCHES_BELOW, next_bit, now_ns};
use crate::plan::{Query, Trigram, trigram};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
    pub(super) fn from_entries(entries: &[(PathBuf, FileEntry)], built_at: u64) -> Index {
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

    pub(super) fn from_parts(mut parts: Parts<'_>) -> Index {
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
pub(super) const ALPHABET: usize = 71;
/// Entries in the dense table: one per trigram of the alphabet.
pub(super) const DENSE_LEN: usize = ALPHABET * ALPHABET * ALPHABET;
/// Bytes of the dense table's presence bitmap, in whole 64-bit words.
pub(super) const SEEN: usize = DENSE_LEN.div_ceil(64) * 8;

/// Each byte's place in the alphabet ([`ALPHABET`], in byte order, so that
/// the table's order is the trigrams'), or `u8::MAX` if it has none; and
/// each place's byte.
pub(super) const CODES: ([u8; 256], [u8; ALPHABET]) = {
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
pub(super) struct Dense {
    pub(super) mask: memmap2::MmapMut,
    pub(super) seen: memmap2::MmapMut,
    pub(super) touched: Vec<u32>,
}

impl Dense {
    pub(super) fn new() -> Option<Dense> {
        Some(Dense {
            mask: memmap2::MmapMut::map_anon(DENSE_LEN).ok()?,
            seen: memmap2::MmapMut::map_anon(SEEN).ok()?,
            touched: Vec::new(),
        })
    }

    /// Gives the tables' pages back; they read as zeros when next touched.
    pub(super) fn release(&mut self) {
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
pub(super) const SCAN_FROM: usize = 2048;

thread_local! {
    pub(super) static DENSE: std::cell::RefCell<Option<Dense>> = std::cell::RefCell::new(Dense::new());
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
pub(super) fn trigrams_with_masks(text: &[u8], blocked: bool) -> (Vec<(Trigram, u8)>, Vec<Block>) {
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
pub(super) fn lines(text: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut from = 0;
    memchr::memchr_iter(b'\n', text)
        .chain([text.len()])
        .map(move |e| (&text[from..e], from = e + 1).0)
}

/// What one pass of [`trigrams_with_masks`] marks: the dense table (each
/// ASCII trigram's mask, and whether it was seen, with the list of those
/// that were), and the other trigrams, each packed with its next byte's
/// bit.
pub(super) struct Marks<'a> {
    pub(super) mask: &'a mut [u8; DENSE_LEN],
    pub(super) seen: &'a mut [u8; SEEN],
    pub(super) touched: &'a mut Vec<u32>,
    pub(super) wide: Vec<u32>,
}

impl Marks<'_> {
    /// Marks the trigrams of line `l` (no newline in it), each with the
    /// byte after it, if any; with `BLOOMED`, sets their bits (and those of
    /// the four-byte strings) in `bloom` ([`bloom_add`]). Every
    /// window but the line's last has a next byte, so the loop takes
    /// windows and next bytes in step, with no bounds checks; a window is
    /// in the dense table exactly when its index is within it ([`SPREAD`]).
    #[inline(always)]
    pub(super) fn line<const BLOOMED: bool>(&mut self, l: &[u8], bloom: &mut [u64; BLOOM_WORDS]) {
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
pub(super) const SPREAD: [u32; 256] = {
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
pub(super) const LOWER: [u8; 256] = {
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
pub(super) fn trigrams_sorted(text: &[u8]) -> Vec<(Trigram, u8)> {
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

/// The index (with its copies) is kept within this share of its files'
/// bytes: past it, copies are left out, the largest files' first.
pub(super) const WITHIN: f64 = 0.9;

/// Leaves out the copies that would take the index past [`WITHIN`] its
/// files' bytes, the largest files' first: a copy saves a search the same
/// opening and closing whatever the file's size, so the small files'
/// copies save the most for their bytes. (Trees of source alone take
/// about 0.7x their bytes in trigrams; with every copy, 1.07x.)
pub(super) fn fit_copies(p: &mut Parts<'_>) {
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
