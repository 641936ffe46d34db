//! The byte layout of an index (see the module above): writing it,
//! reading it back (mapped or not), and saving it atomically.

use super::blocks::{BLOCK_RECORD, BLOOM};
use super::kept::FileKept;
use super::query::list_bytes;
use super::query::{DENSE_GROUP, dense};
use super::{Bytes, FileBlocks, Index, KEPT, TABLE_ENTRY, u32_at, u64_at};
use crate::plan::Trigram;
use anyhow::{Context, Result, bail, ensure};
use rayon::prelude::*;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

impl Index {
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

    pub(super) fn from_bytes(data: Bytes) -> Result<Index> {
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
}

pub(super) const MAGIC: &[u8; 8] = b"GREPPYI3";
// 4: files with a UTF-16 byte order mark are always candidates (3 left
// them out). 5: blocks. 6: blocks of 4 KiB from 16 KiB files on, with
// 512-byte filters (were 16 KiB from 64 KiB, 1 KiB), laid out word by word.
// 7: files up to 128 MiB are indexed (were 16 MiB; same layout, rebuilt so
// that large files get their trigrams). 8: the files that never match are
// listed, so that a scan skips them. 9: copies of the text files. 10: a
// block's filter holds each trigram with the byte after it, too. 11: a
// posting list of more than about one file in 21 is a bitmap. 12: a
// block's filter has one bit per string, not two.
pub(super) const VERSION: u32 = 12;
pub(super) const HEADER: usize = 8 + 5 * 4 + 2 * 8 + 14 * 8;

/// An index before it is laid out as bytes.
pub(super) struct Parts<'a> {
    pub(super) files: Vec<&'a Path>,
    pub(super) sizes: Vec<u64>,
    pub(super) unindexed: Vec<u32>,
    pub(super) never: Vec<u32>,
    /// Per trigram: the file ids and the masks of the bytes after it.
    pub(super) table: Postings,
    /// Per file, its blocks: (offset, line) each, and their filters laid
    /// out as the index keeps them ([`Filters`]).
    pub(super) blocks: Vec<FileBlocks<'a>>,
    /// Per file, its compressed copy, if kept: the frames' bytes, and
    /// where each block's frame starts in them.
    pub(super) kept: Vec<Option<FileKept<'a>>>,
    pub(super) built_at: u64,
}

/// Where [`serialize`] puts the sections that come before the copies
/// (whose bytes start at `content`).
pub(super) struct Layout {
    pub(super) path_bytes: usize,
    pub(super) postings_len: usize,
    pub(super) ids_len: usize,
    pub(super) nblocks: usize,
    pub(super) content: usize,
}

pub(super) fn serialize_layout(p: &Parts<'_>) -> Layout {
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

pub(super) fn serialize(p: &Parts<'_>) -> Vec<u8> {
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

/// Appends the bitmap of `ids` (ascending, below `files`) as [`dense`]
/// lays it out.
pub(super) fn extend_bitmap(d: &mut Vec<u8>, ids: &[u32], files: usize) {
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
pub(super) fn extend_u32s(d: &mut Vec<u8>, v: &[u32]) {
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
pub(super) struct Postings {
    pub(super) trigrams: Vec<Trigram>,
    pub(super) starts: Vec<u32>,
    pub(super) ids: Vec<u32>,
    pub(super) masks: Vec<u8>,
}

/// [`Postings::invert`] splits the trigrams by their top bits into this many
/// ranges, inverted in parallel.
pub(super) const SHARD_BITS: u32 = 6;
/// The bits of a trigram below its shard's.
pub(super) const LOW_BITS: u32 = 24 - SHARD_BITS;
/// A trigram's bits below its shard's.
pub(super) const LOW_MASK: u32 = (1 << LOW_BITS) - 1;
/// A shard with more postings than this is counted in a dense table (a
/// MiB); one with fewer is sorted.
pub(super) const DENSE_SHARD_FROM: usize = 1 << 14;

impl Postings {
    pub(super) fn with_capacity(trigrams: usize, postings: usize) -> Postings {
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
    pub(super) fn push(&mut self, t: Trigram, files: Vec<(u32, u8)>) {
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
    pub(super) fn invert(lists: &[&[(Trigram, u8)]]) -> Postings {
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
