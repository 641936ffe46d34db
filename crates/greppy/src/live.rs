//! A root kept fresh: its index, the changes made since it was built, and a
//! file watcher that feeds them.
//!
//! Readers take a [`Snapshot`] (an `Arc`, taken under a lock held for a
//! pointer copy) and answer from it; they never wait for an update. One
//! updater thread per root owns every change:
//! - it blocks on a channel fed from the tree's inotify queue
//!   ([`crate::watch`]), takes every event queued at that moment as one
//!   batch, re-reads the files the batch names and publishes a new
//!   snapshot;
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
//!
//! The kernel queues a change's event before the system call that made it
//! returns. A search that must see every change made before it was asked
//! ([`Root::wait_fresh`]) reads the queue itself, under the lock that the
//! watcher's thread also holds while it reads and hands events on: once it
//! has read the queue empty, every such change has been handed to the
//! updater and counted in `seen`, and it waits until that many have been
//! applied. When nothing changed, that is one `read` that finds nothing.

use crate::index::{BlockTest, FileEntry, Index, Regions, now_ns};
use crate::plan::Query;
use crate::search::{Entry, Tree, walk_children, walk_tree, walk_tree_with};
use crate::watch::{Change, Watcher};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::{BTreeMap, BTreeSet};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Changed files kept beside the index before they are merged into it.
pub const MERGE_AT: usize = 4096;

/// Events queued for the updater; past that, the watcher drops them and
/// the tree is rebuilt. The queue takes memory only for what it holds (a
/// bounded channel of this size took 4.6 MiB per root up front).
const QUEUE: usize = 1 << 16;

/// The names of the files whose change can change which files a walk takes.
const IGNORE_FILES: [&str; 3] = [".gitignore", ".ignore", ".rgignore"];

/// The most paths the change log keeps; a reader further behind syncs
/// everything.
const LOG_MAX: usize = 1 << 16;

/// The paths each batch named, in order, for readers that keep something
/// of their own beside the index (the ranked index). Path `first + i` is
/// `paths[i]`; a reader whose cursor is below `first` has missed some.
#[derive(Debug)]
struct ChangeLog {
    first: u64,
    paths: std::collections::VecDeque<PathBuf>,
}

impl ChangeLog {
    fn next(&self) -> u64 {
        self.first + self.paths.len() as u64
    }

    /// Everything changed (a rebuild, a catch-up): every reader syncs all.
    fn reset(&mut self) {
        self.first = self.next() + 1;
        self.paths.clear();
    }

    fn push(&mut self, paths: impl IntoIterator<Item = PathBuf>) {
        for p in paths {
            self.paths.push_back(p);
            if self.paths.len() > LOG_MAX {
                self.paths.pop_front();
                self.first += 1;
            }
        }
    }
}

/// Whether `p` is `dir` or lies under it, by bytes: the paths here are
/// absolute and canonical, and `Path::starts_with`, which compares them
/// component by component, was most of a search's time with thousands of
/// changed files.
/// Whether the daemon may list and enter folder `d`.
fn readable(d: &Path) -> bool {
    use rustix::fs::{Access, access};
    access(d, Access::READ_OK | Access::EXEC_OK).is_ok()
}

fn is_under(p: &Path, dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (p, d) = (p.as_os_str().as_bytes(), dir.as_os_str().as_bytes());
    let d = d.strip_suffix(b"/").unwrap_or(d);
    p.starts_with(d) && (p.len() == d.len() || p[d.len()] == b'/' || d.is_empty())
}

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
    /// The symbolic links the walk met and did not follow.
    pub links: Arc<BTreeSet<PathBuf>>,
    /// What a walk with hidden names adds to this one.
    pub hidden: Arc<Hidden>,
}

/// What `rg --hidden` walks beyond rg's default walk: files and folders
/// with hidden names, and what lies under such folders (ignore files still
/// apply), kept beside the index, not in it, and not saved: the index and
/// every search without `--hidden` stay as they were.
///
/// Invariant: a path is here only if the default walk does not take it,
/// and a walk with hidden names does, but for what lies in folders named
/// `.git`, which are listed in `gits` and never entered.
#[derive(Debug, Default, Clone)]
pub struct Hidden {
    pub files: BTreeMap<PathBuf, FileEntry>,
    pub dirs: FxHashSet<PathBuf>,
    pub links: BTreeSet<PathBuf>,
    pub gits: BTreeSet<PathBuf>,
    pub errors: Vec<(PathBuf, String)>,
}

impl Hidden {
    /// What a walk of `dir` with hidden names adds to `default` (the walk
    /// of `dir` without them); with no `default`, `dir` is hidden itself,
    /// and everything under it is added.
    pub fn of(dir: &Path, default: Option<&Tree>) -> Hidden {
        let wide = walk_tree_with(dir, true);
        let Some(d) = default else {
            return Hidden::from_tree(wide);
        };
        let files: FxHashSet<&Path> = d.files.iter().map(PathBuf::as_path).collect();
        let links: FxHashSet<&Path> = d.links.iter().map(PathBuf::as_path).collect();
        let errors: FxHashSet<&Path> = d.errors.iter().map(|(p, _)| p.as_path()).collect();
        Hidden::from_tree(Tree {
            files: wide
                .files
                .into_iter()
                .filter(|f| !files.contains(f.as_path()))
                .collect(),
            dirs: wide
                .dirs
                .into_iter()
                .filter(|x| !d.dirs.contains(x))
                .collect(),
            links: wide
                .links
                .into_iter()
                .filter(|l| !links.contains(l.as_path()))
                .collect(),
            gits: wide.gits,
            errors: wide
                .errors
                .into_iter()
                .filter(|(p, _)| !errors.contains(p.as_path()))
                .collect(),
        })
    }

    fn from_tree(t: Tree) -> Hidden {
        Hidden {
            files: t
                .files
                .into_par_iter()
                .filter_map(|f| FileEntry::read(&f).map(|e| (f, e)))
                .collect(),
            dirs: t.dirs,
            links: t.links.into_iter().collect(),
            gits: t.gits.into_iter().collect(),
            errors: t.errors,
        }
    }

    /// Adds what `other` holds.
    fn extend(&mut self, other: Hidden) {
        self.files.extend(other.files);
        self.dirs.extend(other.dirs);
        self.links.extend(other.links);
        self.gits.extend(other.gits);
        self.errors.extend(other.errors);
        self.errors.sort();
    }

    /// Forgets `p` and everything under it.
    fn remove_tree(&mut self, p: &Path) {
        fn below<V>(m: &BTreeMap<PathBuf, V>, p: &Path) -> Vec<PathBuf> {
            m.range::<Path, _>((std::ops::Bound::Included(p), std::ops::Bound::Unbounded))
                .take_while(|(x, _)| x.starts_with(p))
                .map(|(x, _)| x.clone())
                .collect()
        }
        for f in below(&self.files, p) {
            self.files.remove(&f);
        }
        self.dirs.retain(|x| !x.starts_with(p));
        self.links.retain(|x| !x.starts_with(p));
        self.gits.retain(|x| !x.starts_with(p));
        self.errors.retain(|(x, _)| !x.starts_with(p));
    }

    /// The hidden files under the folder `dir` that may match `q`, in path
    /// order (none has an id in the index).
    pub fn candidates(&self, q: &Query, dir: &Path) -> Vec<(PathBuf, Option<usize>)> {
        self.files
            .range::<Path, _>((std::ops::Bound::Included(dir), std::ops::Bound::Unbounded))
            .take_while(|(p, _)| is_under(p, dir))
            .filter(|(_, e)| e.admits(q))
            .map(|(p, _)| (p.clone(), None))
            .collect()
    }
}

impl Snapshot {
    fn empty() -> Snapshot {
        Snapshot {
            base: Arc::new(Index::build(Vec::new())),
            changes: Arc::default(),
            dirs: Arc::default(),
            errors: Arc::default(),
            links: Arc::default(),
            hidden: Arc::default(),
        }
    }

    /// [`Snapshot::candidates`], and with `hidden` the hidden files too,
    /// in path order.
    pub fn candidates_with(
        &self,
        q: &Query,
        dir: &Path,
        hidden: bool,
    ) -> Vec<(PathBuf, Option<usize>)> {
        let shown = self.candidates(q, dir);
        if !hidden {
            return shown;
        }
        let more = self.hidden.candidates(q, dir);
        if more.is_empty() {
            return shown;
        }
        let mut all = Vec::with_capacity(shown.len() + more.len());
        let (mut a, mut b) = (shown.into_iter().peekable(), more.into_iter().peekable());
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) if x.0 < y.0 => a.next(),
                (_, Some(_)) => b.next(),
                (Some(_), None) => a.next(),
                (None, None) => break,
            };
            all.extend(next);
        }
        all
    }

    /// The files under the folder `dir` that may match `q`, in path order,
    /// each with its id in the base index (`None` for a changed file: see
    /// [`Snapshot::regions`]).
    pub fn candidates(&self, q: &Query, dir: &Path) -> Vec<(PathBuf, Option<usize>)> {
        let range = self.base.under(dir);
        let ids = self.base.candidate_ids(q);
        let lo = ids.partition_point(|&i| (i as usize) < range.start);
        let hi = ids.partition_point(|&i| (i as usize) < range.end);
        let mut base = ids[lo..hi]
            .iter()
            .map(|&i| (self.base.file(i as usize), Some(i as usize)))
            .filter(|(p, _)| !self.changes.contains_key(*p))
            .peekable();
        let mut changed = self
            .changes
            .range::<Path, _>((std::ops::Bound::Included(dir), std::ops::Bound::Unbounded))
            .take_while(|(p, _)| is_under(p, dir))
            .filter(|(_, e)| e.as_ref().is_some_and(|e| e.admits(q)))
            .map(|(p, _)| (p.as_path(), None))
            .peekable();
        let mut out = Vec::with_capacity(hi - lo);
        loop {
            let next = match (base.peek(), changed.peek()) {
                (Some(a), Some(b)) if a.0 < b.0 => base.next(),
                (Some(_), Some(_)) | (None, Some(_)) => changed.next(),
                (Some(_), None) => base.next(),
                (None, None) => break,
            };
            out.extend(next.map(|(p, id)| (p.to_path_buf(), id)));
        }
        out
    }

    /// The parts of a candidate that may match `test`'s query (`None`: all
    /// of it), given its id from [`Snapshot::candidates`].
    pub fn regions(&self, id: Option<usize>, test: &BlockTest<'_>) -> Option<Regions> {
        id.and_then(|i| self.base.regions(i, test))
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

    /// Whether the walk enters the folder `dir`: it went into it, or (while
    /// the folders are not known yet, after a restart) the index has files
    /// under it, which only the walk can have put there.
    pub fn covers(&self, dir: &Path) -> bool {
        self.dirs.contains(dir) || !self.base.under(dir).is_empty()
    }

    /// Whether the file `path` is in the snapshot.
    pub fn has_file(&self, path: &Path) -> bool {
        match self.changes.get(path) {
            Some(e) => e.is_some(),
            None => self.base.find(path).is_some(),
        }
    }

    /// The files at or under `dir`, in path order.
    pub fn files_under(&self, dir: &Path) -> Vec<PathBuf> {
        let base = self
            .base
            .under(dir)
            .map(|i| self.base.file(i))
            .filter(|p| !self.changes.contains_key(*p))
            .map(Path::to_path_buf);
        let changed = self
            .changes
            .range::<Path, _>((std::ops::Bound::Included(dir), std::ops::Bound::Unbounded))
            .take_while(|(p, _)| is_under(p, dir))
            .filter(|(_, e)| e.is_some())
            .map(|(p, _)| p.clone());
        let mut out: Vec<PathBuf> = base.chain(changed).collect();
        out.sort();
        out
    }

    /// The walk errors at or under `dir` (with `hidden`, those of the
    /// walk with hidden names), in path order.
    pub fn errors_under(&self, dir: &Path, hidden: bool) -> Vec<&(PathBuf, String)> {
        let mut errors: Vec<_> = self
            .errors
            .iter()
            .chain(self.hidden.errors.iter().filter(|_| hidden))
            .filter(|(p, _)| p.starts_with(dir))
            .collect();
        if hidden {
            errors.sort();
        }
        errors
    }

    /// Whether a walk of `dir` (with `hidden`, with hidden names) meets a
    /// symbolic link, which `--follow` would follow.
    pub fn links_under(&self, dir: &Path, hidden: bool) -> bool {
        let under = |links: &BTreeSet<PathBuf>| {
            links
                .range::<Path, _>((std::ops::Bound::Included(dir), std::ops::Bound::Unbounded))
                .next()
                .is_some_and(|l| l.starts_with(dir))
        };
        under(&self.links) || (hidden && under(&self.hidden.links))
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
    /// Events read from the queue and handed to the updater, and events
    /// applied.
    seen: AtomicU64,
    applied: AtomicU64,
    watching: AtomicBool,
    /// The root was forgotten: the updater stops.
    stop: AtomicBool,
    /// Rebuilds asked for, and the count of those asked before the last
    /// rebuild began (all of which it covers).
    rebuilds_asked: AtomicU64,
    rebuilds_done: AtomicU64,
    /// The root's folder was deleted.
    gone: AtomicBool,
    /// The folder's device and inode when it was started.
    inode: Option<(u64, u64)>,
    /// Events were dropped (the queue was full): a rebuild is due.
    overflow: AtomicBool,
    /// Events in the updater's queue.
    queued: AtomicUsize,
    /// Why the tree is not watched, if it is not.
    watch_error: Mutex<Option<String>>,
    /// When the snapshot last changed (ns since the epoch).
    updated: AtomicU64,
    /// The tree's inotify queue (once it is watched): whoever holds the
    /// lock reads it and hands the events to the updater.
    watcher: Mutex<Option<Watcher>>,
    /// The updater's queue.
    events: Sender<Msg>,
    /// Written to stop the watcher's thread.
    stop_watch: Option<OwnedFd>,
    /// The paths changed, for the ranked index.
    log: Mutex<ChangeLog>,
}

impl Shared {
    /// Whether the root's folder is still the one this root started with
    /// (a folder made again in its place is another, which the watcher
    /// does not watch).
    fn is_still_there(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(&self.root)
            .is_ok_and(|m| m.is_dir() && self.inode == Some((m.dev(), m.ino())))
    }

    fn fresh(&self, phase: &Phase) -> bool {
        // `applied` is read first: `seen` only grows, so a batch applied
        // between the two reads cannot make this claim freshness wrongly.
        let applied = self.applied.load(Ordering::Acquire);
        self.seen.load(Ordering::Acquire) == applied && self.settled(phase)
    }

    /// Whether the tree is watched, no event was dropped, and the snapshot
    /// is not being rebuilt: then applying what was read makes it fresh.
    fn settled(&self, phase: &Phase) -> bool {
        self.watching.load(Ordering::Acquire)
            && !self.overflow.load(Ordering::Acquire)
            && *phase == Phase::Watching
    }

    /// Whether what a search asked for (`want` events read) is applied
    /// and the snapshot is settled: then it is fresh.
    fn caught_up(&self, want: Option<u64>, phase: &Phase) -> bool {
        want.is_some_and(|w| self.applied.load(Ordering::Acquire) >= w) && self.settled(phase)
    }

    /// Counts `events` as applied (after their snapshot is published) and
    /// wakes those waiting for freshness.
    fn applied(&self, events: u64) {
        self.applied.fetch_add(events, Ordering::AcqRel);
        let _phase = lock(&self.phase);
        self.phase_changed.notify_all();
    }

    /// Reads every event queued now and hands it to the updater; then
    /// `seen` counts it. The caller holds the watcher's lock, so that a
    /// reader that finds the queue empty knows that every event read
    /// before is counted. Past the updater queue's bound events are
    /// dropped (the updater has work, and will rebuild the tree): the
    /// reader never waits on the updater, which may wait on the lock.
    fn drain(&self, w: &mut Watcher) {
        w.drain(|c| {
            if self.queued.load(Ordering::Acquire) >= QUEUE {
                self.overflow.store(true, Ordering::Release);
                return;
            }
            self.seen.fetch_add(1, Ordering::AcqRel);
            self.queued.fetch_add(1, Ordering::AcqRel);
            if self.events.send(Msg::Event(c)).is_err() {
                self.queued.fetch_sub(1, Ordering::AcqRel);
                self.seen.fetch_sub(1, Ordering::AcqRel);
            }
        });
    }

    /// Reads the queue now; the count of events that must be applied for
    /// every change made before this call to be, or `None` if the tree is
    /// not watched (yet).
    fn drain_now(&self) -> Option<u64> {
        let mut w = lock(&self.watcher);
        self.drain(w.as_mut()?);
        Some(self.seen.load(Ordering::Acquire))
    }
}

enum Msg {
    Event(Change),
    /// An index was saved: the first, and the same bytes mapped from the
    /// file it was saved to.
    Saved(Arc<Index>, Index),
    Rebuild,
    Stop,
}

/// A wait for freshness under way ([`Root::ask_fresh`]).
#[derive(Debug)]
pub struct FreshAsk {
    want: Option<u64>,
    deadline: std::time::Instant,
}

/// A root the daemon answers for.
#[derive(Debug)]
pub struct Root {
    shared: Arc<Shared>,
    tx: Sender<Msg>,
    saver: Option<Arc<SaveSlot>>,
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
        let inode = std::fs::metadata(&root).ok().map(|m| {
            use std::os::unix::fs::MetadataExt;
            (m.dev(), m.ino())
        });
        let mut first = Snapshot::empty();
        let mut updated = now_ns();
        if let Some(base) = saved {
            updated = base.built_at();
            first.base = Arc::new(base);
        }
        let (tx, rx) = channel();
        let stop_watch = rustix::event::eventfd(
            0,
            rustix::event::EventfdFlags::CLOEXEC | rustix::event::EventfdFlags::NONBLOCK,
        )
        .ok();
        let shared = Arc::new(Shared {
            root,
            snapshot: Mutex::new(Arc::new(first)),
            phase: Mutex::new(phase),
            phase_changed: Condvar::new(),
            seen: AtomicU64::new(0),
            applied: AtomicU64::new(0),
            watching: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            rebuilds_asked: AtomicU64::new(0),
            rebuilds_done: AtomicU64::new(0),
            gone: AtomicBool::new(false),
            inode,
            overflow: AtomicBool::new(false),
            queued: AtomicUsize::new(0),
            watch_error: Mutex::new(None),
            updated: AtomicU64::new(updated),
            watcher: Mutex::new(None),
            events: tx.clone(),
            stop_watch,
            log: Mutex::new(ChangeLog {
                first: 1,
                paths: Default::default(),
            }),
        });
        let saver = store.map(|file| {
            let slot = Arc::new(SaveSlot::default());
            let s = slot.clone();
            let events = tx.clone();
            std::thread::Builder::new()
                .name("greppy-save".into())
                .spawn(move || save_latest(&s, &file, &events))
                .expect("spawn the saver thread");
            slot
        });
        let s = shared.clone();
        let flush = saver.clone();
        std::thread::Builder::new()
            .name("greppy-update".into())
            .spawn(move || Updater::new(s, saver).run(rx))
            .expect("spawn the updater thread");
        Root {
            shared,
            tx,
            saver: flush,
        }
    }

    pub fn path(&self) -> &Path {
        &self.shared.root
    }

    pub fn phase(&self) -> Phase {
        lock(&self.shared.phase).clone()
    }

    /// Whether the root's folder was deleted (its watch went with it).
    pub fn is_gone(&self) -> bool {
        self.shared.gone.load(Ordering::Acquire)
    }

    /// Whether `meta` is this root's folder: the one it started with, still
    /// there (a folder made again in its place has another inode).
    pub fn is(&self, meta: &std::fs::Metadata) -> bool {
        use std::os::unix::fs::MetadataExt;
        meta.is_dir() && self.shared.inode == Some((meta.dev(), meta.ino())) && !self.is_gone()
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

    /// Waits, at most `limit`, for every change made before this call to
    /// be applied, and, with `builds`, for a build under way to end (else
    /// a build ends the wait at once); whether the snapshot is then fresh.
    pub fn wait_fresh(&self, limit: std::time::Duration, builds: bool) -> bool {
        let asked = self.ask_fresh(limit);
        self.wait_asked(asked, builds)
    }

    /// The first half of [`Root::wait_fresh`]: reads the tree's event
    /// queue and returns at once, so that the caller may work while the
    /// updater applies what was read; [`Root::wait_asked`] waits for it.
    /// The wait covers every change made before this call.
    pub fn ask_fresh(&self, limit: std::time::Duration) -> FreshAsk {
        FreshAsk {
            want: self.shared.drain_now(),
            deadline: std::time::Instant::now() + limit,
        }
    }

    /// Whether [`Root::wait_asked`] would find `asked` answered at once
    /// (every change read then applied, and the tree watched), without
    /// waiting.
    pub fn answered(&self, asked: &FreshAsk) -> bool {
        let sh = &self.shared;
        sh.caught_up(asked.want, &lock(&sh.phase))
    }

    /// The second half of [`Root::wait_fresh`].
    pub fn wait_asked(&self, asked: FreshAsk, builds: bool) -> bool {
        let sh = &self.shared;
        let FreshAsk { mut want, deadline } = asked;
        let mut phase = lock(&sh.phase);
        loop {
            if want.is_none() {
                // Not watched when asked: the queue is read once it is
                // (every change made before then is in it, or in the
                // first walk).
                want = sh.drain_now();
            }
            if sh.caught_up(want, &phase) {
                return true;
            }
            let now = std::time::Instant::now();
            let failed = lock(&sh.watch_error).is_some();
            if failed || (*phase != Phase::Watching && !builds) || now >= deadline {
                return false;
            }
            phase = sh
                .phase_changed
                .wait_timeout(phase, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// The paths changed since `cursor` (a value this returned before, or
    /// 0), or `None` if some are no longer known (then everything may have
    /// changed); and the cursor to ask from next time. A path is a file or
    /// a folder; the snapshot taken after this call has them all applied.
    pub fn changes_since(&self, cursor: u64) -> (Option<Vec<PathBuf>>, u64) {
        Root::log_since(&lock(&self.shared.log), cursor)
    }

    fn log_since(log: &ChangeLog, cursor: u64) -> (Option<Vec<PathBuf>>, u64) {
        let next = log.next();
        if cursor < log.first {
            return (None, next);
        }
        let from = (cursor - log.first) as usize;
        (Some(log.paths.iter().skip(from).cloned().collect()), next)
    }

    /// Blocks until the newest index is on disk.
    pub fn flush(&self) {
        if let Some(s) = &self.saver {
            let mut st = lock(&s.state);
            while st.next.is_some() || st.busy {
                st = s.idle.wait(st).unwrap_or_else(|e| e.into_inner());
            }
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
        self.shared.rebuilds_asked.fetch_add(1, Ordering::AcqRel);
        let _ = self.tx.send(Msg::Rebuild);
    }

    /// Blocks until the root answers from a whole index (not building,
    /// catching up or rebuilding), built after every rebuild asked for
    /// before this call.
    pub fn wait_ready(&self) {
        let asked = self.shared.rebuilds_asked.load(Ordering::Acquire);
        let mut phase = lock(&self.shared.phase);
        while *phase != Phase::Watching || self.shared.rebuilds_done.load(Ordering::Acquire) < asked
        {
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
        // it if it is waiting.
        self.shared.stop.store(true, Ordering::Release);
        let _ = self.tx.send(Msg::Stop);
    }
}

/// The saver thread's work: the index waiting to be saved, whether one is
/// being written, whether to stop.
#[derive(Debug, Default)]
struct SaveSlot {
    state: Mutex<SaveState>,
    wake: Condvar,
    idle: Condvar,
}

#[derive(Debug, Default)]
struct SaveState {
    next: Option<Arc<Index>>,
    busy: bool,
    stop: bool,
}

/// The updater thread's state.
struct Updater {
    shared: Arc<Shared>,
    saver: Option<Arc<SaveSlot>>,
}

impl Updater {
    fn new(shared: Arc<Shared>, saver: Option<Arc<SaveSlot>>) -> Updater {
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
            lock(&s.state).next = Some(index.clone());
            s.wake.notify_one();
        }
    }

    fn run(mut self, rx: Receiver<Msg>) {
        // The tree is watched before the first walk, so that no change
        // made during it is missed.
        match Watcher::new(&self.shared.root).and_then(|w| {
            let fd = w.fd().try_clone_to_owned()?;
            Ok((w, fd))
        }) {
            Ok((w, fd)) => {
                *lock(&self.shared.watcher) = Some(w);
                let shared = self.shared.clone();
                let started = std::thread::Builder::new()
                    .name("greppy-watch".into())
                    .spawn(move || watch_loop(&shared, &fd));
                match started {
                    Ok(_) => {
                        self.shared.watching.store(true, Ordering::Release);
                        // Wakes searches waiting for the tree to be watched.
                        self.shared.applied(0);
                    }
                    Err(e) => self.watch_failed(&e),
                }
            }
            Err(e) => self.watch_failed(&e),
        }
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
            let mut rebuild = self.shared.overflow.swap(false, Ordering::AcqRel);
            let mut paths = BTreeSet::new();
            let mut folders = BTreeSet::new();
            for m in batch {
                match m {
                    Msg::Stop => return,
                    Msg::Rebuild => rebuild = true,
                    Msg::Saved(saved, mapped) => {
                        self.map_saved(&saved, mapped);
                        drop(saved);
                        crate::give_back_memory();
                    }
                    Msg::Event(e) => {
                        self.shared.queued.fetch_sub(1, Ordering::AcqRel);
                        events += 1;
                        match e {
                            Change::Path(p) => {
                                paths.insert(p);
                            }
                            Change::Modes(p) => {
                                folders.insert(p);
                            }
                            Change::Overflow => rebuild = true,
                        }
                    }
                }
            }
            if paths.contains(&self.shared.root) && !self.shared.is_still_there() {
                self.shared.gone.store(true, Ordering::Release);
            }
            let snap = self.snapshot();
            // A folder's modes matter when it became readable or not (not
            // for a `touch`): then it is walked again, and the root's
            // whole tree.
            folders.retain(|d| readable(d) == snap.errors.iter().any(|(e, _)| e == d));
            rebuild |= folders.contains(&self.shared.root);
            paths.extend(folders.iter().cloned());
            rebuild |= paths.iter().any(|p| {
                p.file_name()
                    .is_some_and(|n| IGNORE_FILES.iter().any(|i| n == *i))
                    && p.parent().is_some_and(|d| snap.dirs.contains(d))
            });
            if rebuild {
                let asked = self.shared.rebuilds_asked.load(Ordering::Acquire);
                self.rebuild();
                self.shared.rebuilds_done.fetch_max(asked, Ordering::AcqRel);
                self.shared.applied(0);
            } else if !paths.is_empty() {
                self.apply(&snap, &paths);
            }
            self.shared.applied(events);
        }
    }

    /// Answers from the file `saved` was written to, mapped, instead of
    /// from memory, if the snapshot's index is still that one: the same
    /// bytes, but in the page cache, which the kernel may reclaim and which
    /// count towards the daemon's memory only where searches read them,
    /// not on the heap for as long as the daemon runs. The heap's copy is
    /// given back once no reader holds it.
    fn map_saved(&self, saved: &Arc<Index>, mapped: Index) {
        {
            let mut snap = lock(&self.shared.snapshot);
            if !Arc::ptr_eq(&snap.base, saved) {
                return;
            }
            *snap = Arc::new(Snapshot {
                base: Arc::new(mapped),
                changes: snap.changes.clone(),
                dirs: snap.dirs.clone(),
                errors: snap.errors.clone(),
                links: snap.links.clone(),
                hidden: snap.hidden.clone(),
            });
        }
        self.shared.applied(0);
    }

    fn watch_failed(&self, e: &std::io::Error) {
        *lock(&self.shared.watch_error) = Some(format!(
            "cannot watch {}: {e}; answers may be stale until `greppy index`",
            self.shared.root.display()
        ));
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
        let hidden = Hidden::of(&self.shared.root, Some(&tree));
        let base = Arc::new(Index::build(tree.files));
        // The build's file entries are freed: its peak is not kept (and is
        // given back before anyone is told the build is done).
        crate::give_back_memory();
        self.save(&base);
        self.publish(
            Snapshot {
                base,
                changes: Arc::default(),
                dirs: Arc::new(tree.dirs),
                errors: Arc::new(tree.errors),
                links: Arc::new(tree.links.into_iter().collect()),
                hidden: Arc::new(hidden),
            },
            Phase::Watching,
        );
        lock(&self.shared.log).reset();
    }

    /// After an index is read from disk: reads the files changed since it
    /// was built, and finds the new and the removed ones.
    fn catch_up(&mut self) {
        let snap = self.snapshot();
        let tree = walk_tree(&self.shared.root);
        let hidden = Hidden::of(&self.shared.root, Some(&tree));
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
                    let mtime = crate::index::mtime_ns(&m).unwrap_or(u64::MAX);
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
            links: Arc::new(tree.links.into_iter().collect()),
            hidden: Arc::new(hidden),
        };
        self.compact(&mut next);
        self.publish(next, Phase::Watching);
        lock(&self.shared.log).reset();
        crate::index::release_thread_scratch();
    }

    /// Applies one batch of changed paths.
    fn apply(&mut self, snap: &Snapshot, paths: &BTreeSet<PathBuf>) {
        let root = &self.shared.root;
        let mut changes = (*snap.changes).clone();
        let mut dirs: Option<FxHashSet<PathBuf>> = None;
        let mut errors: Option<Vec<(PathBuf, String)>> = None;
        let mut links: Option<BTreeSet<PathBuf>> = None;
        let mut children: FxHashMap<PathBuf, FxHashMap<PathBuf, Entry>> = FxHashMap::default();
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
                           links: &mut BTreeSet<PathBuf>,
                           d: &Path| {
            dirs.retain(|x| !x.starts_with(d));
            links.retain(|x| !x.starts_with(d));
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
            let ls = links.get_or_insert_with(|| (*snap.links).clone());
            ls.remove(p);
            let taken = children
                .entry(parent.to_path_buf())
                .or_insert_with(|| walk_children(parent, false));
            let was_dir = ds.contains(p.as_path());
            // A folder that appears, or whose readability changed, is
            // watched first, then walked (so no file made in between is
            // missed), with the walk's errors: one that became unreadable
            // holds no files now, as rg sees it, and says so.
            let mut walk_in = |changes: &mut BTreeMap<PathBuf, Option<FileEntry>>,
                               ds: &mut FxHashSet<PathBuf>,
                               ls: &mut BTreeSet<PathBuf>| {
                if let Some(w) = lock(&self.shared.watcher).as_mut() {
                    w.add_tree(p);
                }
                let tree = walk_tree(p);
                ds.insert(p.clone());
                ds.extend(tree.dirs);
                ls.extend(tree.links);
                let errs = errors.get_or_insert_with(|| (*snap.errors).clone());
                errs.retain(|(e, _)| !e.starts_with(p));
                errs.extend(tree.errors);
                for f in tree.files {
                    if let Some(e) = FileEntry::read(&f) {
                        changes.insert(f, Some(e));
                    }
                }
            };
            match taken.get(p) {
                Some(Entry::File) => {
                    if was_dir {
                        remove_tree(&mut changes, ds, ls, p);
                    }
                    match FileEntry::read(p) {
                        Some(e) => {
                            changes.insert(p.clone(), Some(e));
                        }
                        None => gone(&mut changes, p),
                    }
                }
                // A folder that an event names is walked again even if it
                // is known: it was made (or moved here) anew, or its
                // readability changed. A known one may be another folder
                // now (removed and made again before this batch), or one
                // that an earlier walk found but did not watch (made in
                // its parent between the parent's watch listing it and
                // the parent's walk); neither is watched, and what was
                // written in it since is in no event.
                Some(Entry::Dir) => {
                    if was_dir {
                        remove_tree(&mut changes, ds, ls, p);
                    } else {
                        gone(&mut changes, p);
                    }
                    // The watcher adds a new folder's watch only after
                    // it has handed out the events it read with its
                    // creation: `walk_in` watches it first.
                    walk_in(&mut changes, ds, ls);
                }
                Some(Entry::Link) | None => {
                    if was_dir {
                        remove_tree(&mut changes, ds, ls, p);
                    }
                    gone(&mut changes, p);
                    if taken.get(p).is_some() {
                        ls.insert(p.clone());
                    }
                }
            }
        }
        let hidden = self.apply_hidden(&snap.hidden, dirs.as_ref().unwrap_or(&snap.dirs), paths);
        let mut next = Snapshot {
            base: snap.base.clone(),
            changes: Arc::new(changes),
            dirs: dirs.map_or_else(|| snap.dirs.clone(), Arc::new),
            errors: errors.map_or_else(|| snap.errors.clone(), Arc::new),
            links: links.map_or_else(|| snap.links.clone(), Arc::new),
            hidden: hidden.map_or_else(|| snap.hidden.clone(), Arc::new),
        };
        self.compact(&mut next);
        self.publish(next, Phase::Watching);
        // After the snapshot: a reader that sees these paths finds them
        // applied.
        lock(&self.shared.log).push(paths.iter().filter(|p| p.starts_with(root)).cloned());
        crate::index::release_thread_scratch();
    }

    /// Applies one batch of changed paths to what only a walk with hidden
    /// names takes, given the default walk's folders after the batch;
    /// `None` if nothing there changed.
    fn apply_hidden(
        &self,
        old: &Hidden,
        dirs: &FxHashSet<PathBuf>,
        paths: &BTreeSet<PathBuf>,
    ) -> Option<Hidden> {
        let root = &self.shared.root;
        let mut next: Option<Hidden> = None;
        let mut wide: FxHashMap<PathBuf, FxHashMap<PathBuf, Entry>> = FxHashMap::default();
        let mut narrow: FxHashMap<PathBuf, FxHashMap<PathBuf, Entry>> = FxHashMap::default();
        for p in paths {
            if !p.starts_with(root) || p == root {
                continue;
            }
            let Some(parent) = p.parent() else { continue };
            let shown = dirs.contains(parent);
            let h = next.as_ref().unwrap_or(old);
            if !shown && !h.dirs.contains(parent) {
                continue;
            }
            let any = wide
                .entry(parent.to_path_buf())
                .or_insert_with(|| walk_children(parent, true))
                .get(p)
                .copied();
            let default = if shown {
                narrow
                    .entry(parent.to_path_buf())
                    .or_insert_with(|| walk_children(parent, false))
                    .get(p)
                    .copied()
            } else {
                None
            };
            let known = h.files.contains_key(p)
                || h.dirs.contains(p)
                || h.links.contains(p)
                || h.gits.contains(p);
            if any.is_none() && !known {
                continue;
            }
            let h = next.get_or_insert_with(|| old.clone());
            h.remove_tree(p);
            match (any, default) {
                // A folder of the default walk, walked again there: its
                // hidden entries, walked again here.
                (Some(_), Some(Entry::Dir)) => {
                    let tree = walk_tree(p);
                    h.extend(Hidden::of(p, Some(&tree)));
                }
                (Some(_), Some(_)) | (None, _) => {}
                (Some(Entry::File), None) => {
                    if let Some(e) = FileEntry::read(p) {
                        h.files.insert(p.clone(), e);
                    }
                }
                (Some(Entry::Link), None) => {
                    h.links.insert(p.clone());
                }
                (Some(Entry::Dir), None) if p.file_name() == Some(".git".as_ref()) => {
                    h.gits.insert(p.clone());
                }
                (Some(Entry::Dir), None) => {
                    if let Some(w) = lock(&self.shared.watcher).as_mut() {
                        w.add_tree(p);
                    }
                    h.extend(Hidden::of(p, None));
                }
            }
        }
        next
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
        // The watcher's thread stops, and the tree's watches go with the
        // inotify instance.
        if let Some(fd) = &self.shared.stop_watch {
            let _ = rustix::io::write(fd, &1u64.to_ne_bytes());
        }
        *lock(&self.shared.watcher) = None;
        if let Some(s) = &self.saver {
            lock(&s.state).stop = true;
            s.wake.notify_one();
        }
    }
}

/// The watcher's thread: waits until the tree's event queue has events,
/// then reads them and hands them on (unless a search read them first),
/// until the updater stops.
fn watch_loop(shared: &Shared, queue: &OwnedFd) {
    use rustix::event::{PollFd, PollFlags, poll};
    let Some(stop) = &shared.stop_watch else {
        // Without a way to stop it, the thread would outlive its root:
        // searches read the queue themselves, and the updater's batches
        // wait for them.
        return;
    };
    loop {
        let mut fds = [
            PollFd::new(queue, PollFlags::IN),
            PollFd::new(stop, PollFlags::IN),
        ];
        match poll(&mut fds, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return,
        }
        if !fds[1].revents().is_empty() || shared.stop.load(Ordering::Acquire) {
            return;
        }
        let mut w = lock(&shared.watcher);
        let Some(w) = w.as_mut() else { return };
        shared.drain(w);
    }
}

/// Saves the newest index it is given (one a newer one replaced before
/// its turn is skipped), until told to stop; a waiting save is done first.
/// An index built in memory is then offered to the updater mapped from the
/// file (`Msg::Saved`), before the save counts as done.
fn save_latest(slot: &SaveSlot, file: &Path, events: &Sender<Msg>) {
    loop {
        let index = {
            let mut st = lock(&slot.state);
            st.busy = false;
            slot.idle.notify_all();
            loop {
                match st.next.take() {
                    Some(i) => {
                        st.busy = true;
                        break i;
                    }
                    None if st.stop => return,
                    None => st = slot.wake.wait(st).unwrap_or_else(|e| e.into_inner()),
                }
            }
        };
        match index.save(file) {
            Ok(()) if !index.is_mapped() => {
                // The file was just written whole from these bytes; the
                // length and build time check that no other save came in
                // between.
                if let Ok(m) = Index::open(file)
                    && m.bytes() == index.bytes()
                    && m.built_at() == index.built_at()
                {
                    let _ = events.send(Msg::Saved(index, m));
                }
            }
            Ok(()) => {}
            Err(e) => eprintln!("greppy: {e:#}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ChangeLog, LOG_MAX, Root, is_under};
    use std::path::{Path, PathBuf};

    #[test]
    fn the_change_log_says_when_a_reader_missed_paths() {
        let log = ChangeLog {
            first: 1,
            paths: Default::default(),
        };
        let shared_log = std::sync::Mutex::new(log);
        let since = |cursor: u64| Root::log_since(&shared_log.lock().unwrap(), cursor);
        // A new reader (cursor 0) has missed everything.
        assert_eq!(since(0), (None, 1));
        shared_log
            .lock()
            .unwrap()
            .push([PathBuf::from("/r/a"), PathBuf::from("/r/b")]);
        assert_eq!(since(1), (Some(vec!["/r/a".into(), "/r/b".into()]), 3));
        assert_eq!(since(2), (Some(vec!["/r/b".into()]), 3));
        assert_eq!(since(3), (Some(vec![]), 3));
        // A rebuild: even a reader that was up to date syncs everything.
        shared_log.lock().unwrap().reset();
        assert_eq!(since(3).0, None);
        let (_, next) = since(3);
        assert_eq!(since(next), (Some(vec![]), next));
        // Past the bound the oldest paths go, and a reader that needed
        // them is told so.
        shared_log
            .lock()
            .unwrap()
            .push((0..=LOG_MAX).map(|i| PathBuf::from(format!("/r/{i}"))));
        assert_eq!(since(next).0, None);
        let (kept, end) = since(next + 1);
        assert_eq!(kept.map(|k| k.len()), Some(LOG_MAX));
        assert_eq!(end, next + LOG_MAX as u64 + 1);
    }

    /// A built index is answered from its file once saved, not held on the
    /// heap: the same files come out of it.
    #[test]
    fn a_saved_index_is_answered_from_its_file() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().canonicalize().unwrap();
        let tree = dir.join("tree");
        std::fs::create_dir_all(tree.join("src")).unwrap();
        for i in 0..20 {
            let text = format!("fn saved_{i}() {{ mapped_token() }}\n");
            std::fs::write(tree.join(format!("src/f{i}.rs")), text).unwrap();
        }
        let root = Root::start(tree.clone(), Some(dir.join("index")));
        root.wait_ready();
        root.flush();
        // The saver hands the mapped index to the updater before the save
        // counts as done; the updater swaps it in and wakes waiters.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let sh = &root.shared;
        let mut phase = sh.phase.lock().unwrap();
        while !sh.snapshot.lock().unwrap().base.is_mapped() {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            assert!(!left.is_zero(), "the index is still on the heap");
            phase = sh.phase_changed.wait_timeout(phase, left).unwrap().0;
        }
        drop(phase);
        let snap = root.snapshot().unwrap();
        let q = crate::plan::plan_pattern("mapped_token", false, false).unwrap();
        assert_eq!(snap.candidates(&q, &tree).len(), 20);
    }

    /// A folder removed and made again, with a file in it, before the
    /// updater looked. Its events name a folder the snapshot knows, which
    /// is another all the same: unwatched, with files that no event names.
    /// It is walked and watched again. (A folder made while its parent's
    /// walk ran, which the walk saw and the watch did not, is the same
    /// case; it made `folders_moved_within_out_of_and_into_the_tree_are_followed`
    /// fail now and then under load.)
    #[test]
    fn a_folder_made_again_is_walked_and_watched_again() {
        let t = tempfile::tempdir().unwrap();
        let tree = t.path().canonicalize().unwrap();
        std::fs::create_dir(tree.join("d")).unwrap();
        std::fs::write(tree.join("d/old.rs"), "old\n").unwrap();
        let root = Root::start(tree.clone(), None);
        root.wait_ready();
        let files = |root: &Root| {
            assert!(root.wait_fresh(std::time::Duration::from_secs(30), true));
            root.snapshot().unwrap().files_under(&tree)
        };
        assert_eq!(files(&root), [tree.join("d/old.rs")]);
        {
            // No one reads the queue meanwhile: the updater sees the
            // folder's events only once it is made again.
            let _held = root.shared.watcher.lock().unwrap();
            std::fs::remove_dir_all(tree.join("d")).unwrap();
            std::fs::create_dir(tree.join("d")).unwrap();
            std::fs::write(tree.join("d/new.rs"), "new\n").unwrap();
        }
        assert_eq!(files(&root), [tree.join("d/new.rs")]);
        std::fs::write(tree.join("d/later.rs"), "later\n").unwrap();
        assert_eq!(
            files(&root),
            [tree.join("d/later.rs"), tree.join("d/new.rs")]
        );
    }

    #[test]
    fn under_by_bytes_as_by_components() {
        let cases = [
            ("/a/b", "/a/b", true),
            ("/a/b/c.rs", "/a/b", true),
            ("/a/b/c.rs", "/a/b/", true),
            ("/a/bc/d.rs", "/a/b", false),
            ("/a/b.rs", "/a/b", false),
            ("/a", "/a/b", false),
            ("/x/y", "/", true),
        ];
        for (p, d, want) in cases {
            assert_eq!(is_under(Path::new(p), Path::new(d)), want, "{p} under {d}");
            assert_eq!(Path::new(p).starts_with(d), want, "{p} under {d}");
        }
    }
}
