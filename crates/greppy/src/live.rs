//! A root kept fresh: its index, the changes made since it was built, and a
//! file watcher that feeds them.
//!
//! Readers take a [`Snapshot`] (an `Arc`, taken under a lock held for a
//! pointer copy) and answer from it; they never wait for an update. One
//! updater thread per root owns every change:
//! - it blocks on a channel fed by `notify` (inotify), takes every event
//!   queued at that moment as one batch, re-reads the files the batch names
//!   and publishes a new snapshot;
//! - a file is taken only if the walk of its folder would take it (ignore
//!   files, hidden names), and only in folders the walk went into;
//! - when the changes grow past [`MERGE_AT`] files, it merges them into a
//!   new index ([`Index::merge`]: unchanged files are not read again), which
//!   a saver thread writes to disk;
//! - a change to an ignore file, an event queue overflow, or a request
//!   rebuilds the whole index, while readers go on with the old snapshot.
//!
//! Invariant: a snapshot is `fresh` only if every event the watcher has
//! delivered has been applied to it, and the watcher is running.

use crate::index::{FileEntry, Index, now_ns};
use crate::plan::Query;
use crate::search::{walk_children, walk_tree};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Changed files kept beside the index before they are merged into it.
pub const MERGE_AT: usize = 4096;

/// Events queued for the updater before the watcher waits (the kernel then
/// queues, and past its own bound reports an overflow: a rebuild).
const QUEUE: usize = 1 << 16;

/// The names of the files whose change can change which files a walk takes.
const IGNORE_FILES: [&str; 3] = [".gitignore", ".ignore", ".rgignore"];

/// Locks, and goes on past a poisoned lock: every value kept under these
/// locks is replaced whole, never left half-written.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A consistent view of a root: an index and the files changed since.
#[derive(Debug)]
pub struct Snapshot {
    pub base: Arc<Index>,
    /// Changed files: the new entry, or `None` if the file is gone.
    pub changes: Arc<BTreeMap<PathBuf, Option<FileEntry>>>,
    /// Every folder the walk takes.
    pub dirs: Arc<FxHashSet<PathBuf>>,
    /// The walk's errors (unreadable folders, link loops): the path each
    /// is about, and rg's message.
    pub errors: Arc<Vec<(PathBuf, String)>>,
}

impl Snapshot {
    fn empty() -> Snapshot {
        Snapshot {
            base: Arc::new(Index::build(Vec::new())),
            changes: Arc::default(),
            dirs: Arc::default(),
            errors: Arc::default(),
        }
    }

    /// The files under the folder `dir` that may match `q`, in path order.
    pub fn candidates(&self, q: &Query, dir: &Path) -> Vec<PathBuf> {
        let range = self.base.under(dir);
        let ids = self.base.candidate_ids(q);
        let lo = ids.partition_point(|&i| (i as usize) < range.start);
        let hi = ids.partition_point(|&i| (i as usize) < range.end);
        let mut base = ids[lo..hi]
            .iter()
            .map(|&i| self.base.file(i as usize))
            .filter(|p| !self.changes.contains_key(*p))
            .peekable();
        let mut changed = self
            .changes
            .range::<Path, _>((std::ops::Bound::Included(dir), std::ops::Bound::Unbounded))
            .take_while(|(p, _)| p.starts_with(dir))
            .filter(|(_, e)| e.as_ref().is_some_and(|e| e.admits(q)))
            .map(|(p, _)| p.as_path())
            .peekable();
        let mut out = Vec::with_capacity(hi - lo);
        loop {
            let next = match (base.peek(), changed.peek()) {
                (Some(a), Some(b)) if a < b => base.next(),
                (Some(_), Some(_)) | (None, Some(_)) => changed.next(),
                (Some(_), None) => base.next(),
                (None, None) => break,
            };
            out.extend(next.map(Path::to_path_buf));
        }
        out
    }

    /// The number of files.
    pub fn files(&self) -> u64 {
        let mut n = self.base.len() as u64;
        for (p, e) in self.changes.iter() {
            let was = self.base.find(p).is_some();
            match (was, e.is_some()) {
                (false, true) => n += 1,
                (true, false) => n = n.saturating_sub(1),
                _ => {}
            }
        }
        n
    }

    /// The bytes of the files.
    pub fn source_bytes(&self) -> u64 {
        let mut n = self.base.source_bytes();
        for (p, e) in self.changes.iter() {
            if let Some(id) = self.base.find(p) {
                n = n.saturating_sub(self.base.size(id));
            }
            n += e.as_ref().map_or(0, |e| e.size);
        }
        n
    }

    /// The walk errors at or under `dir`.
    pub fn errors_under(&self, dir: &Path) -> Vec<&(PathBuf, String)> {
        self.errors
            .iter()
            .filter(|(p, _)| p.starts_with(dir))
            .collect()
    }
}

/// Where a root's index stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// The first index is being built: nothing to answer from yet.
    Building,
    /// Answering from an index read from disk while the tree's changes
    /// since are read.
    CatchingUp,
    /// Answering, and applying changes as they come.
    Watching,
    /// Answering from the last snapshot while a new index is built.
    Rebuilding,
}

#[derive(Debug)]
struct Shared {
    root: PathBuf,
    snapshot: Mutex<Arc<Snapshot>>,
    phase: Mutex<Phase>,
    phase_changed: Condvar,
    /// Events the watcher delivered, and events applied.
    seen: AtomicU64,
    applied: AtomicU64,
    watching: AtomicBool,
    /// The root was forgotten: the updater stops.
    stop: AtomicBool,
    /// Why the tree is not watched, if it is not.
    watch_error: Mutex<Option<String>>,
    /// When the snapshot last changed (ns since the epoch).
    updated: AtomicU64,
}

impl Shared {
    fn fresh(&self, phase: &Phase) -> bool {
        // `applied` is read first: `seen` only grows, so a batch applied
        // between the two reads cannot make this claim freshness wrongly.
        let applied = self.applied.load(Ordering::Acquire);
        self.watching.load(Ordering::Acquire)
            && self.seen.load(Ordering::Acquire) == applied
            && *phase == Phase::Watching
    }

    /// Counts `events` as applied (after their snapshot is published) and
    /// wakes those waiting for freshness.
    fn applied(&self, events: u64) {
        self.applied.fetch_add(events, Ordering::AcqRel);
        let _phase = lock(&self.phase);
        self.phase_changed.notify_all();
    }
}

enum Msg {
    Event(notify::Result<notify::Event>),
    Rebuild,
    Stop,
}

/// A root the daemon answers for.
#[derive(Debug)]
pub struct Root {
    shared: Arc<Shared>,
    tx: SyncSender<Msg>,
}

/// What `greppy status` says of a root.
#[derive(Debug, Clone)]
pub struct Status {
    pub root: PathBuf,
    pub phase: Phase,
    pub files: u64,
    pub source_bytes: u64,
    pub index_bytes: u64,
    pub changes: u64,
    pub updated_ns: u64,
    pub fresh: bool,
    pub watch_error: Option<String>,
}

impl Root {
    /// Starts keeping `root` (a canonical folder): from the index at
    /// `store` if there is a good one there (catching up on what changed
    /// since), else by building one, which is then saved there.
    pub fn start(root: PathBuf, store: Option<PathBuf>) -> Root {
        let saved = store.as_deref().and_then(|s| Index::open(s).ok());
        let phase = if saved.is_some() {
            Phase::CatchingUp
        } else {
            Phase::Building
        };
        let mut first = Snapshot::empty();
        let mut updated = now_ns();
        if let Some(base) = saved {
            updated = base.built_at();
            first.base = Arc::new(base);
        }
        let shared = Arc::new(Shared {
            root,
            snapshot: Mutex::new(Arc::new(first)),
            phase: Mutex::new(phase),
            phase_changed: Condvar::new(),
            seen: AtomicU64::new(0),
            applied: AtomicU64::new(0),
            watching: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            watch_error: Mutex::new(None),
            updated: AtomicU64::new(updated),
        });
        let (tx, rx) = sync_channel(QUEUE);
        let s = shared.clone();
        let events = tx.clone();
        std::thread::Builder::new()
            .name("greppy-update".into())
            .spawn(move || Updater::new(s, store).run(events, rx))
            .expect("spawn the updater thread");
        Root { shared, tx }
    }

    pub fn path(&self) -> &Path {
        &self.shared.root
    }

    /// The current snapshot; `None` while the first index is built.
    pub fn snapshot(&self) -> Option<Arc<Snapshot>> {
        if *lock(&self.shared.phase) == Phase::Building {
            return None;
        }
        Some(lock(&self.shared.snapshot).clone())
    }

    /// Whether the snapshot has every change the watcher reported.
    pub fn fresh(&self) -> bool {
        self.shared.fresh(&lock(&self.shared.phase))
    }

    /// Waits, at most `limit`, for the changes the watcher reported to be
    /// applied, unless a build is under way (a query never waits for
    /// one); whether the snapshot is then fresh.
    pub fn wait_fresh(&self, limit: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + limit;
        let mut phase = lock(&self.shared.phase);
        loop {
            if self.shared.fresh(&phase) {
                return true;
            }
            let now = std::time::Instant::now();
            if *phase != Phase::Watching || now >= deadline {
                return false;
            }
            phase = self
                .shared
                .phase_changed
                .wait_timeout(phase, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Asks for a full rebuild (`greppy index`).
    pub fn rebuild(&self) {
        {
            let mut phase = lock(&self.shared.phase);
            if *phase != Phase::Building {
                *phase = Phase::Rebuilding;
            }
        }
        let _ = self.tx.send(Msg::Rebuild);
    }

    /// Blocks until the root answers from a whole index (not building,
    /// catching up or rebuilding).
    pub fn wait_ready(&self) {
        let mut phase = lock(&self.shared.phase);
        while *phase != Phase::Watching {
            phase = self
                .shared
                .phase_changed
                .wait(phase)
                .unwrap_or_else(|e| e.into_inner());
        }
    }

    pub fn status(&self) -> Status {
        let snap = lock(&self.shared.snapshot).clone();
        let phase = lock(&self.shared.phase).clone();
        Status {
            root: self.shared.root.clone(),
            files: snap.files(),
            source_bytes: snap.source_bytes(),
            index_bytes: snap.base.bytes() as u64,
            changes: snap.changes.len() as u64,
            updated_ns: self.shared.updated.load(Ordering::Relaxed),
            fresh: self.fresh(),
            watch_error: lock(&self.shared.watch_error).clone(),
            phase,
        }
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        // The flag stops the updater at its next batch; the message wakes
        // it if it is waiting (a full queue wakes it anyway).
        self.shared.stop.store(true, Ordering::Release);
        let _ = self.tx.try_send(Msg::Stop);
    }
}

/// The index waiting to be saved, and whether the saver is to stop.
#[derive(Debug, Default)]
struct SaveSlot {
    next: Mutex<(Option<Arc<Index>>, bool)>,
    wake: Condvar,
}

/// The updater thread's state.
struct Updater {
    shared: Arc<Shared>,
    saver: Option<Arc<SaveSlot>>,
}

impl Updater {
    fn new(shared: Arc<Shared>, store: Option<PathBuf>) -> Updater {
        let saver = store.map(|file| {
            let slot = Arc::new(SaveSlot::default());
            let s = slot.clone();
            std::thread::Builder::new()
                .name("greppy-save".into())
                .spawn(move || save_latest(&s, &file))
                .expect("spawn the saver thread");
            slot
        });
        Updater { shared, saver }
    }

    fn snapshot(&self) -> Arc<Snapshot> {
        lock(&self.shared.snapshot).clone()
    }

    fn publish(&self, snap: Snapshot, phase: Phase) {
        *lock(&self.shared.snapshot) = Arc::new(snap);
        self.shared.updated.store(now_ns(), Ordering::Relaxed);
        *lock(&self.shared.phase) = phase;
        self.shared.phase_changed.notify_all();
    }

    fn save(&self, index: &Arc<Index>) {
        if let Some(s) = &self.saver {
            // A save still waiting is replaced by this newer index.
            lock(&s.next).0 = Some(index.clone());
            s.wake.notify_one();
        }
    }

    fn run(mut self, events: SyncSender<Msg>, rx: Receiver<Msg>) {
        let shared = self.shared.clone();
        // The watcher starts before the first walk, so that no change made
        // during it is missed.
        let watcher = notify::recommended_watcher(move |e: notify::Result<notify::Event>| {
            // Opening and reading a file changes nothing (and the updater
            // and searches open files: counting those would be a loop).
            if e.as_ref().is_ok_and(|e| e.kind.is_access()) {
                return;
            }
            shared.seen.fetch_add(1, Ordering::AcqRel);
            let _ = events.send(Msg::Event(e));
        });
        let _watcher = match watcher.and_then(|mut w| {
            use notify::Watcher;
            w.watch(&self.shared.root, notify::RecursiveMode::Recursive)
                .map(|()| w)
        }) {
            Ok(w) => {
                self.shared.watching.store(true, Ordering::Release);
                Some(w)
            }
            Err(e) => {
                *lock(&self.shared.watch_error) = Some(format!(
                    "cannot watch {}: {e}; answers may be stale until `greppy index`",
                    self.shared.root.display()
                ));
                None
            }
        };
        let phase = lock(&self.shared.phase).clone();
        if phase == Phase::CatchingUp {
            self.catch_up();
        } else {
            self.rebuild();
        }
        loop {
            let Ok(first) = rx.recv() else { return };
            if self.shared.stop.load(Ordering::Acquire) {
                return;
            }
            let mut batch = vec![first];
            loop {
                match rx.try_recv() {
                    Ok(m) => batch.push(m),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return,
                }
                if batch.len() >= QUEUE {
                    break;
                }
            }
            let mut events = 0u64;
            let mut rebuild = false;
            let mut paths = BTreeSet::new();
            for m in batch {
                match m {
                    Msg::Stop => return,
                    Msg::Rebuild => rebuild = true,
                    Msg::Event(e) => {
                        events += 1;
                        match e {
                            Ok(e) if !e.need_rescan() => paths.extend(e.paths),
                            _ => rebuild = true,
                        }
                    }
                }
            }
            let snap = self.snapshot();
            rebuild |= paths.iter().any(|p| {
                p.file_name()
                    .is_some_and(|n| IGNORE_FILES.iter().any(|i| n == *i))
                    && p.parent().is_some_and(|d| snap.dirs.contains(d))
            });
            if rebuild {
                self.rebuild();
            } else {
                self.apply(&snap, &paths);
            }
            self.shared.applied(events);
        }
    }

    /// Walks and indexes the whole tree.
    fn rebuild(&mut self) {
        {
            let mut phase = lock(&self.shared.phase);
            if *phase != Phase::Building {
                *phase = Phase::Rebuilding;
            }
        }
        let tree = walk_tree(&self.shared.root);
        let base = Arc::new(Index::build(tree.files));
        self.save(&base);
        self.publish(
            Snapshot {
                base,
                changes: Arc::default(),
                dirs: Arc::new(tree.dirs),
                errors: Arc::new(tree.errors),
            },
            Phase::Watching,
        );
    }

    /// After an index is read from disk: reads the files changed since it
    /// was built, and finds the new and the removed ones.
    fn catch_up(&mut self) {
        let snap = self.snapshot();
        let tree = walk_tree(&self.shared.root);
        // Coarse file clocks can stamp a write slightly before the index's
        // time: a second's margin.
        let since = snap.base.built_at().saturating_sub(1_000_000_000);
        let mut changes = BTreeMap::new();
        let walked: FxHashSet<&Path> = tree.files.iter().map(PathBuf::as_path).collect();
        for f in snap.base.files() {
            if !walked.contains(f) {
                changes.insert(f.to_path_buf(), None);
            }
        }
        for f in &tree.files {
            let changed = match snap.base.find(f) {
                None => true,
                Some(id) => std::fs::metadata(f).map_or(true, |m| {
                    let mtime = m
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map_or(u64::MAX, |d| d.as_nanos() as u64);
                    mtime >= since || m.len() != snap.base.size(id)
                }),
            };
            if changed {
                changes.insert(f.clone(), FileEntry::read(f));
            }
        }
        let mut next = Snapshot {
            base: snap.base.clone(),
            changes: Arc::new(changes),
            dirs: Arc::new(tree.dirs),
            errors: Arc::new(tree.errors),
        };
        self.compact(&mut next);
        self.publish(next, Phase::Watching);
    }

    /// Applies one batch of changed paths.
    fn apply(&mut self, snap: &Snapshot, paths: &BTreeSet<PathBuf>) {
        let root = &self.shared.root;
        let mut changes = (*snap.changes).clone();
        let mut dirs: Option<FxHashSet<PathBuf>> = None;
        let mut children: FxHashMap<PathBuf, FxHashMap<PathBuf, bool>> = FxHashMap::default();
        let base = &snap.base;
        let gone = |changes: &mut BTreeMap<PathBuf, Option<FileEntry>>, p: &Path| {
            if base.find(p).is_some() {
                changes.insert(p.to_path_buf(), None);
            } else {
                changes.remove(p);
            }
        };
        let remove_tree = |changes: &mut BTreeMap<PathBuf, Option<FileEntry>>,
                           dirs: &mut FxHashSet<PathBuf>,
                           d: &Path| {
            dirs.retain(|x| !x.starts_with(d));
            for id in base.under(d) {
                changes.insert(base.file(id).to_path_buf(), None);
            }
            let below: Vec<PathBuf> = changes
                .range::<Path, _>((std::ops::Bound::Included(d), std::ops::Bound::Unbounded))
                .take_while(|(p, _)| p.starts_with(d))
                .map(|(p, _)| p.clone())
                .collect();
            for p in below {
                gone(changes, &p);
            }
        };
        // Parents come before their children in `Path` order, so a new
        // folder is taken before the files in it are looked at.
        for p in paths {
            if !p.starts_with(root) || p == root {
                continue;
            }
            let Some(parent) = p.parent() else { continue };
            let ds = dirs.get_or_insert_with(|| (*snap.dirs).clone());
            if !ds.contains(parent) {
                continue;
            }
            let taken = children
                .entry(parent.to_path_buf())
                .or_insert_with(|| walk_children(parent));
            let was_dir = ds.contains(p.as_path());
            match taken.get(p) {
                Some(false) => {
                    if was_dir {
                        remove_tree(&mut changes, ds, p);
                    }
                    match FileEntry::read(p) {
                        Some(e) => {
                            changes.insert(p.clone(), Some(e));
                        }
                        None => gone(&mut changes, p),
                    }
                }
                Some(true) => {
                    if !was_dir {
                        gone(&mut changes, p);
                        let tree = walk_tree(p);
                        ds.extend(tree.dirs);
                        for f in tree.files {
                            if let Some(e) = FileEntry::read(&f) {
                                changes.insert(f, Some(e));
                            }
                        }
                    }
                }
                None => {
                    if was_dir {
                        remove_tree(&mut changes, ds, p);
                    }
                    gone(&mut changes, p);
                }
            }
        }
        let mut next = Snapshot {
            base: snap.base.clone(),
            changes: Arc::new(changes),
            dirs: dirs.map_or_else(|| snap.dirs.clone(), Arc::new),
            errors: snap.errors.clone(),
        };
        self.compact(&mut next);
        self.publish(next, Phase::Watching);
    }

    /// Merges the changes into a new index once there are many.
    fn compact(&self, snap: &mut Snapshot) {
        if snap.changes.len() < MERGE_AT {
            return;
        }
        let base = Arc::new(snap.base.merge(&snap.changes, now_ns()));
        self.save(&base);
        snap.base = base;
        snap.changes = Arc::default();
    }
}

impl Drop for Updater {
    fn drop(&mut self) {
        self.shared.watching.store(false, Ordering::Release);
        if let Some(s) = &self.saver {
            lock(&s.next).1 = true;
            s.wake.notify_one();
        }
    }
}

/// Saves the newest index it is given (one a newer one replaced before
/// its turn is skipped), until told to stop; a waiting save is done first.
fn save_latest(slot: &SaveSlot, file: &Path) {
    loop {
        let index = {
            let mut next = lock(&slot.next);
            loop {
                match next.0.take() {
                    Some(i) => break i,
                    None if next.1 => return,
                    None => next = slot.wake.wait(next).unwrap_or_else(|e| e.into_inner()),
                }
            }
        };
        if let Err(e) = index.save(file) {
            eprintln!("greppy: {e:#}");
        }
    }
}
