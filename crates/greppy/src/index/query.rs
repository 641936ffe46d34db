//! Answering a query's plan: posting lists (sorted ids, or a bitmap for
//! dense ones), their intersections and unions, and the masks.

use super::{Index, TABLE_ENTRY, next_bit, u32_at};
use crate::plan::{Query, Trigram};
use std::path::Path;

impl Index {
    /// The `count` file ids at byte `at` (the unindexed or the never
    /// matching files: plain ids, not a posting list).
    pub(super) fn ids(&self, at: usize, count: usize) -> Vec<u32> {
        (0..count)
            .filter_map(|i| u32_at(&self.data, at + 4 * i))
            .filter(|&id| (id as usize) < self.files)
            .collect()
    }

    /// Field `k` of table entry `i` ([`TABLE_ENTRY`]).
    pub(super) fn field(&self, i: usize, k: usize) -> u32 {
        u32_at(&self.data, self.table + TABLE_ENTRY * i + 4 * k).unwrap_or(0)
    }

    /// Table entry `i`: the trigram and its posting list.
    pub(super) fn entry(&self, i: usize) -> (Trigram, List<'_>) {
        let f = |k: usize| self.field(i, k) as usize;
        (self.field(i, 0), self.list(f(1), f(2), 4 * f(3)))
    }

    /// The posting list of `count` files whose masks start at posting
    /// `first` and whose ids at byte `ids_at` of the postings; laid out
    /// as [`dense`] says. A list the file does not hold whole reads as
    /// what it holds.
    pub(super) fn list(&self, first: usize, count: usize, ids_at: usize) -> List<'_> {
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
    pub(super) fn lookup(&self, t: Trigram) -> List<'_> {
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
    pub(super) fn eval(&self, q: &Query) -> Option<Vec<u32>> {
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

/// A set at least a list's length over this is intersected with it by a
/// merge, not by galloping.
pub(super) const MERGE_FROM: usize = 4;

/// A posting list laid out densely ([`dense`]) takes this many bytes per
/// 64 files: the bitmap's word, then how many postings come before it.
pub(super) const DENSE_GROUP: usize = 12;

/// Whether a posting list of `count` of an index's `files` is laid out as
/// a bitmap of the files (with each word's rank, for the masks) instead of
/// their ids: when that takes fewer bytes, from about one file in 21 on.
/// A set of candidates is then tested against it one bit each, with no
/// search, no branch and no load that waits on another.
pub(super) fn dense(count: usize, files: usize) -> bool {
    DENSE_GROUP * files.div_ceil(64) < 4 * count
}

/// One trigram's posting list, as the index lays it out: its ids (or its
/// bitmap, if [`dense`]) and a mask per posting.
#[derive(Clone, Copy)]
pub(super) struct List<'a> {
    pub(super) ids: &'a [u8],
    pub(super) masks: &'a [u8],
    pub(super) dense: bool,
    pub(super) files: usize,
}

impl<'a> List<'a> {
    const EMPTY: List<'static> = List {
        ids: &[],
        masks: &[],
        dense: false,
        files: 0,
    };

    /// How many files it holds.
    pub(super) fn len(&self) -> usize {
        self.masks.len()
    }

    /// Its files in id order, each with its mask.
    pub(super) fn postings(self) -> impl Iterator<Item = (u32, u8)> + 'a {
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
    pub(super) fn ids_with(self, bit: u8) -> Vec<u32> {
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
    pub(super) fn retain(&self, a: &mut Vec<u32>, bit: u8) {
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
pub(super) fn retain_dense(a: &mut Vec<u32>, groups: &[u8], masks: &[u8], bit: u8) {
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
pub(super) fn posting(ids: &[u8], k: usize) -> u32 {
    let b = &ids[4 * k..4 * k + 4];
    u32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

/// Keeps the ids of `a` (sorted) that the posting list `ids` (its bytes,
/// with `masks`, one per id, or none) holds with `bit` in their mask (any
/// mask, for 0), by walking both: no branch on which side moves on.
pub(super) fn retain_merging(a: &mut Vec<u32>, ids: &[u8], masks: &[u8], bit: u8) {
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
pub(super) fn retain_galloping(a: &mut Vec<u32>, ids: &[u8], masks: &[u8], bit: u8) {
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

pub(super) fn intersect(a: &[u32], b: &[u32]) -> Vec<u32> {
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

pub(super) fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
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

/// The bytes of the ids of a posting list of `count` of `files` files.
pub(super) fn list_bytes(count: usize, files: usize) -> usize {
    if dense(count, files) {
        DENSE_GROUP * files.div_ceil(64)
    } else {
        4 * count
    }
}
