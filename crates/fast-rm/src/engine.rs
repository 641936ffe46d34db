//! The deletion engine.
//!
//! Work is per directory. A directory is opened with
//! `openat(parent, name, O_DIRECTORY|O_NOFOLLOW)`, read with `getdents64`,
//! and each entry is handled as it is read: a subdirectory becomes a new
//! unit of work, and a non-directory is removed with `unlinkat(dirfd,
//! name)` (its type comes from `d_type`; there is no stat per entry),
//! read by read while a directory on tmpfs is small, else in batches.
//! Each directory counts its outstanding work (its own scan plus its
//! unfinished subdirectories); when the count reaches zero it is removed
//! with `unlinkat(parent, name, AT_REMOVEDIR)` and its parent's count drops
//! in turn. There is no global scan-then-delete barrier, and nothing is
//! listed before it is removed, so memory stays bounded.
//!
//! The run starts on the calling thread. Only when the tree turns out to be
//! more than 128 entries does it start a rayon pool (the calling thread
//! waits for it) and hand the outstanding directories to it; the
//! pool's scope ends when the last directory is gone, so shutdown is an
//! event, never a timer.

use crate::report::{Reporter, quote};
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir, SeekFrom};
use rustix::io::Errno;
use std::cell::RefCell;
use std::ffi::{CStr, CString, OsStr};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// How the engine runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// Count and list, remove nothing.
    pub dry_run: bool,
    /// Remove directories named on the command line with what is in them;
    /// without, only when they are empty (`rm -d`).
    pub recursive: bool,
    /// Do not descend into directories on another filesystem than their
    /// command-line argument.
    pub one_file_system: bool,
    /// Worker threads once the run goes parallel; 1 never starts a pool.
    /// `None`: as many as there are CPUs, asked only when a pool starts
    /// (asking reads cgroup files, which a small run need not pay for).
    pub threads: Option<usize>,
    /// What to ask the user about before removing it.
    pub prompt: Prompt,
}

/// Which removals need a yes first (rm's interactive rules).
#[derive(Debug, Clone, Copy, Default)]
pub struct Prompt {
    /// Every entry, and every non-empty directory before descending (-i).
    pub always: bool,
    /// Entries the user may not write to (symlinks excepted).
    pub write_protected: bool,
}

impl Prompt {
    fn active(self) -> bool {
        self.always || self.write_protected
    }
}

/// Entries handled on the calling thread before a pool may start. Starting
/// the pool costs about 0.3 ms of wall time (its threads, and rayon's idle
/// spinning); nested trees on tmpfs, 31 alternating runs: 100 entries stay
/// serial (1.9 ms); 1,000 took 4.7 ms against 6.2 with 1,024 here (rmz 4.6),
/// 3,000 10.1 against 11.6 (rmz 10.4); 200 pay for it (2.6 against 2.35).
/// (Measured when the caller was one of the pool's workers; with every
/// worker a new thread, nested 300 and 1,000 took 1.00x and 0.99x as long.)
const PARALLEL_AFTER: u64 = 128;
/// Entries in a directory with one subdirectory that make a chain worth
/// two threads (one level's files unlinked while the next is read).
const CHAIN_FILES: u64 = 16;
/// How often a directory that refills while it is removed is scanned again.
/// Each failed `rmdir` after a scan means an entry was made since, so a
/// writer that makes at most this many entries never makes the removal
/// fail; one that goes on without end makes it fail after this many scans
/// (GNU rm fails at the first). (It was 8: a writer of 300 files beside a
/// loaded machine's removal outlasted the scans now and then.)
const MAX_RESCANS: u8 = 64;
/// The getdents buffer of each thread.
const DIRENT_BUF: usize = 128 * 1024;
/// How much of it one `getdents64` call fills on a filesystem whose files
/// live in memory: about 256 names.
const DIRENT_BUF_IN_MEMORY: usize = 8 * 1024;
/// On such a filesystem, until a directory has given this many entries,
/// the names each `getdents64` call returns are unlinked before the next
/// call, while the kernel's objects that the call walked (dentries,
/// inodes) are still in the CPU's cache; past it, names gather into
/// batches (sorted, and unlinked by every thread) as on a disk. Nested
/// trees of 1,000 files a directory on tmpfs (AMD EPYC, 512 KiB of L2 a
/// core), three interleaved runs by hand of 8-10 rounds: 0.89x-0.93x the
/// time of one batch a directory after one 128 KiB read, with 7-12% less
/// CPU; the benchmark's runs against rmz moved less (DECISIONS.md,
/// 2026-12-03). On ext4 a flat directory's first names went unsorted and
/// the run was slower, so disks keep the batches.
const BUFFERED_UNTIL: u64 = 1024;
/// The most names held before they are unlinked (bounds memory).
const BATCH: usize = 1 << 16;
/// Batches this large are unlinked in inode order.
const SORT_FROM: usize = 1024;
/// Batches this large are unlinked by all the pool's threads at once: in
/// one directory of a disk filesystem much of an unlink's work (freeing the
/// inode and its blocks) happens outside the directory's lock. 100k files in
/// one folder on ext4: 0.79-1.06 s with one thread, 0.45-0.51 s with two
/// (tmpfs: 0.34-0.36 against 0.27-0.34).
const PAR_UNLINK_FROM: usize = 4096;
/// Names a thread takes at a time from such a batch.
const PAR_UNLINK_CHUNK: usize = 256;

/// A directory's state beside its pending count.
const NORMAL: u8 = 0;
/// Already dealt with (vanished, or removed another way): no rmdir.
const HANDLED: u8 = 1;
/// Something below it could not be removed: keep it, say nothing more.
const FAILED: u8 = 2;

/// A directory being removed. The root of each argument hangs from an
/// *anchor*: the argument's parent directory, which is never removed.
struct Dir {
    parent: Option<Arc<Dir>>,
    /// The name in the parent; for an anchor, the display prefix of the
    /// argument (everything up to its last `/`).
    name: CString,
    fd: OnceLock<OwnedFd>,
    /// Its own scan, plus each unfinished subdirectory.
    pending: AtomicUsize,
    state: AtomicU8,
    rescans: AtomicU8,
    /// The device of the command-line argument, for `--one-file-system`.
    dev: u64,
    /// Dry runs only: whether entries could be unlinked from this directory
    /// (see [`Engine::dry_check`]), found out once.
    removable: OnceLock<Removable>,
    /// Slashes shown after an argument's own name (one if it was given
    /// any), and not after the names below it.
    slashes: usize,
}

/// Whether the user may unlink entries from a directory: an error, or, for a
/// sticky directory the user does not own, only the entries they own.
type Removable = Result<Option<u32>, Errno>;

impl Dir {
    fn child(parent: &Arc<Dir>, name: &CStr) -> Arc<Dir> {
        Dir::shown_child(parent, name, 0)
    }

    /// A child shown with `slashes` after its name (an argument's).
    fn shown_child(parent: &Arc<Dir>, name: &CStr, slashes: usize) -> Arc<Dir> {
        parent.pending.fetch_add(1, Ordering::AcqRel);
        Arc::new(Dir {
            parent: Some(parent.clone()),
            name: name.to_owned(),
            fd: OnceLock::new(),
            pending: AtomicUsize::new(1),
            state: AtomicU8::new(NORMAL),
            rescans: AtomicU8::new(0),
            dev: parent.dev,
            removable: OnceLock::new(),
            slashes,
        })
    }

    fn fail(&self) {
        self.state.store(FAILED, Ordering::Release);
    }

    fn fd(&self) -> BorrowedFd<'_> {
        self.fd.get().expect("an opened directory").as_fd()
    }

    /// The path for messages: the argument as given, then the names below
    /// it.
    fn path(&self) -> PathBuf {
        let mut p = self.path_bare().into_os_string().into_vec();
        p.resize(p.len() + self.slashes, b'/');
        PathBuf::from(std::ffi::OsString::from_vec(p))
    }

    /// `path`, without an argument's trailing slashes.
    fn path_bare(&self) -> PathBuf {
        let mut names: Vec<&[u8]> = Vec::new();
        let mut d = self;
        while let Some(p) = &d.parent {
            names.push(d.name.to_bytes());
            d = p;
        }
        let mut bytes = d.name.to_bytes().to_vec();
        for (i, n) in names.iter().rev().enumerate() {
            if i > 0 {
                bytes.push(b'/');
            }
            bytes.extend_from_slice(n);
        }
        PathBuf::from(OsStr::from_bytes(&bytes))
    }

    fn entry_path(&self, name: &CStr) -> PathBuf {
        let mut p = self.path_bare().into_os_string().into_vec();
        if !p.is_empty() && self.parent.is_some() {
            p.push(b'/');
        }
        p.extend_from_slice(name.to_bytes());
        PathBuf::from(std::ffi::OsString::from_vec(p))
    }
}

/// Threads for a tree on a filesystem whose files live in memory (`Some(true)`,
/// see [`in_memory_fs`]) or not: one a CPU where removing
/// is all CPU work (tmpfs, ramfs), one more on other filesystems, where an
/// unlink also waits (the journal, the disk) and a spare thread works
/// meanwhile. Nested trees of 100k files on ext4, four interleaved runs of
/// 8-10 rounds on 2 CPUs: three threads took 0.88-0.93x of two's time;
/// flat 0.94x and 1.10x, deep 0.99x (DECISIONS.md).
fn default_threads(in_memory: Option<bool>) -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    match in_memory {
        Some(false) => cpus + 1,
        Some(true) | None => cpus,
    }
}

/// Whether the files of `on`'s filesystem live in memory; `None` if
/// `fstatfs` fails.
fn in_memory_fs(on: BorrowedFd<'_>) -> Option<bool> {
    // `f_type`'s width differs between architectures.
    #[allow(clippy::unnecessary_cast)]
    rustix::fs::fstatfs(on)
        .ok()
        .map(|fs| is_memory_backed(fs.f_type as i64))
}

/// Whether a filesystem's magic number is one whose files live in memory.
fn is_memory_backed(magic: i64) -> bool {
    // ramfs's number, from the kernel's `magic.h` (libc has no name for it).
    const RAMFS_MAGIC: i64 = 0x8584_58f6;
    #[allow(clippy::unnecessary_cast)] // its type differs between architectures
    let tmpfs = libc::TMPFS_MAGIC as i64;
    magic == tmpfs || magic == RAMFS_MAGIC
}

/// Whether the run should leave the calling thread for the pool, once
/// `read` entries have been read in all and the last directory held
/// `last` of them, with `waiting` directories left: only where there is
/// parallel work, two directories to go or one below a directory that held
/// files (a chain with files along it: one thread unlinks a level's files
/// while another reads the next level). A chain of bare directories, and a
/// small tree, stay on this thread.
fn worth_a_pool(read: u64, last: u64, waiting: usize) -> bool {
    read > PARALLEL_AFTER && (waiting >= 2 || (waiting == 1 && last >= CHAIN_FILES))
}

/// What the engine shares between threads.
#[derive(Debug)]
pub struct Engine<'r> {
    cfg: Config,
    report: &'r Reporter,
    seen: AtomicU64,
    /// Whether the first directory asked about (the first scanned) is on
    /// a filesystem whose files live in memory: it sets how directories
    /// are read (`BUFFERED_UNTIL`) and the pool's size. One `fstatfs` a run.
    in_memory: OnceLock<Option<bool>>,
    /// Started when a tree turns out large, and kept for the next.
    pool: OnceLock<Option<rayon::ThreadPool>>,
}

/// A command-line argument, checked and ready.
pub struct Root {
    /// The argument's parent directory, open.
    anchor: Arc<Dir>,
    base: CString,
    is_dir: bool,
    /// Slashes shown after its name.
    slashes: usize,
}

impl std::fmt::Debug for Root {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Root")
            .field("base", &self.base)
            .field("is_dir", &self.is_dir)
            .finish()
    }
}

impl Root {
    /// Opens `parent` (which may follow symlinks, as rm does for the leading
    /// components) and remembers `base` inside it. `prefix` is how the
    /// argument's leading components are shown; `dev` is the argument's device.
    pub fn new(
        parent: &std::path::Path,
        prefix: Vec<u8>,
        base: CString,
        is_dir: bool,
        dev: u64,
        slashes: usize,
    ) -> rustix::io::Result<Self> {
        let fd = rustix::fs::open(
            parent,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let anchor = Arc::new(Dir {
            parent: None,
            name: CString::new(prefix).unwrap_or_default(),
            fd: OnceLock::from(fd),
            pending: AtomicUsize::new(1),
            state: AtomicU8::new(NORMAL),
            rescans: AtomicU8::new(0),
            dev,
            removable: OnceLock::new(),
            slashes: 0,
        });
        Ok(Self {
            anchor,
            base,
            is_dir,
            slashes,
        })
    }
}

impl Root {
    /// The argument's directory, below its anchor.
    fn dir(&self) -> Arc<Dir> {
        Dir::shown_child(&self.anchor, &self.base, self.slashes)
    }
}

enum Spawn<'a, 's> {
    Local(&'a RefCell<Vec<Arc<Dir>>>),
    Pool(&'a rayon::Scope<'s>),
}

/// Each thread's buffers, reused from directory to directory.
#[derive(Default)]
struct Scratch {
    dirents: Vec<MaybeUninit<u8>>,
    batch: Batch,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Names waiting to be unlinked, in one byte arena (NUL-terminated names),
/// with their inode numbers.
#[derive(Default)]
struct Batch {
    arena: Vec<u8>,
    /// (inode, offset of the name in `arena`)
    items: Vec<(u64, usize)>,
}

impl Batch {
    fn push(&mut self, ino: u64, name: &CStr) {
        self.items.push((ino, self.arena.len()));
        self.arena.extend_from_slice(name.to_bytes_with_nul());
    }

    fn len(&self) -> usize {
        self.items.len()
    }

    fn clear(&mut self) {
        self.arena.clear();
        self.items.clear();
    }

    fn sort_by_inode(&mut self) {
        self.items.sort_unstable_by_key(|&(ino, _)| ino);
    }

    fn names(&self) -> impl Iterator<Item = &CStr> {
        self.items.iter().map(|&(_, at)| {
            CStr::from_bytes_until_nul(&self.arena[at..]).expect("names are NUL-terminated")
        })
    }
}

impl<'r> Engine<'r> {
    pub fn new(cfg: Config, report: &'r Reporter) -> Self {
        Self {
            cfg,
            report,
            seen: AtomicU64::new(0),
            in_memory: OnceLock::new(),
            pool: OnceLock::new(),
        }
    }

    /// Removes one argument, and returns when it is gone or has failed.
    /// The caller takes the arguments one after the other, as rm does, so
    /// that what `-v` and errors say comes in their order, and an argument
    /// that an earlier one covered finds its work done.
    pub fn remove(&self, root: Root) {
        let stack = RefCell::new(Vec::new());
        if root.is_dir && !self.cfg.recursive {
            return self.rmdir_root(&root);
        }
        if root.is_dir {
            stack.borrow_mut().push(root.dir());
            // The anchor's own count stands for nothing now.
            root.anchor.pending.fetch_sub(1, Ordering::AcqRel);
        } else {
            self.unlink_counted(&root.anchor, &root.base, &Spawn::Local(&stack));
        }
        self.drain(stack);
    }

    /// Removes the directories on `stack` and all below them: on this
    /// thread while the tree is small, then in the pool.
    fn drain(&self, stack: RefCell<Vec<Arc<Dir>>>) {
        loop {
            let Some(dir) = stack.borrow_mut().pop() else {
                return;
            };
            let before = self.seen.load(Ordering::Relaxed);
            self.process(dir, &Spawn::Local(&stack));
            let read = self.seen.load(Ordering::Relaxed);
            let waiting = stack.borrow().len();
            if self.cfg.threads != Some(1) && worth_a_pool(read, read - before, waiting) {
                break;
            }
        }
        // The tree is large: hand what is left to a pool (one for the run),
        // sized for the filesystem of the directory they were read from.
        let left = stack.take();
        let on = left
            .first()
            .and_then(|d| d.parent.as_ref())
            .and_then(|p| p.fd.get());
        match on.and_then(|fd| self.pool(fd.as_fd())) {
            Some(pool) => {
                pool.scope(|s| {
                    for dir in left {
                        self.spawn(s, dir);
                    }
                });
            }
            // No threads to be had: finish here, alone.
            None => {
                *stack.borrow_mut() = left;
                while let Some(dir) = stack.borrow_mut().pop() {
                    self.process(dir, &Spawn::Local(&stack));
                }
            }
        }
    }

    /// The run's pool, started the first time it is asked for (its size
    /// chosen by the run's filesystem, `in_memory`, asked of `on` if no
    /// scan has asked yet); `None` if no thread can be had.
    fn pool(&self, on: BorrowedFd<'_>) -> Option<&rayon::ThreadPool> {
        self.pool
            .get_or_init(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(
                        self.cfg
                            .threads
                            .unwrap_or_else(|| default_threads(self.in_memory(on))),
                    )
                    // Every worker is a new thread, and the calling thread
                    // waits in `scope`. Had it been a worker
                    // (`use_current_thread`), the one new thread was often
                    // placed on the caller's busy CPU and waited there for
                    // a tick (up to 6 ms, `perf sched`), with the other
                    // CPU idle; see DECISIONS.md.
                    .thread_name(|i| format!("fast-rm-{i}"))
                    .build()
                    .ok()
            })
            .as_ref()
    }

    /// Whether this run treats its trees as on a filesystem whose files
    /// live in memory, found from `on`'s the first time it is asked.
    fn in_memory(&self, on: BorrowedFd<'_>) -> Option<bool> {
        *self.in_memory.get_or_init(|| in_memory_fs(on))
    }

    /// `rm -d`: removes a directory named on the command line only if it
    /// is empty.
    fn rmdir_root(&self, root: &Root) {
        let dir = root.dir();
        let parent = &root.anchor;
        if self.cfg.prompt.active() && !self.may_rmdir(parent, &dir) {
            return;
        }
        let removed = if self.cfg.dry_run {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            rustix::fs::openat(parent.fd(), root.base.as_c_str(), flags, Mode::empty()).and_then(
                |fd| match is_empty(fd.as_fd()) {
                    true => Ok(()),
                    false => Err(Errno::NOTEMPTY),
                },
            )
        } else {
            rustix::fs::unlinkat(parent.fd(), root.base.as_c_str(), AtFlags::REMOVEDIR)
        };
        match removed {
            Ok(()) => self.report.dir_removed(|| dir.path()),
            Err(e) => self.report.error(&dir.path(), e.into()),
        }
    }

    fn spawn<'s>(&'s self, s: &rayon::Scope<'s>, dir: Arc<Dir>) {
        s.spawn(move |s| self.process(dir, &Spawn::Pool(s)));
    }

    fn push<'s>(&'s self, to: &Spawn<'_, 's>, dir: Arc<Dir>) {
        match to {
            Spawn::Local(stack) => stack.borrow_mut().push(dir),
            Spawn::Pool(s) => self.spawn(s, dir),
        }
    }

    /// Opens (or, on a rescan, rewinds) and scans one directory.
    fn process<'s>(&'s self, dir: Arc<Dir>, to: &Spawn<'_, 's>) {
        self.report.tick_dir();
        if dir.fd.get().is_some() {
            // A rescan after ENOTEMPTY.
            if let Err(e) = rustix::fs::seek(dir.fd(), SeekFrom::Start(0)) {
                self.report.error(&dir.path(), e.into());
                dir.fail();
            } else {
                self.scan(&dir, to);
            }
            return self.release(dir, to);
        }
        let parent = dir.parent.as_ref().expect("a directory below an anchor");
        let flags = OFlags::RDONLY
            | OFlags::DIRECTORY
            | OFlags::NOFOLLOW
            | OFlags::CLOEXEC
            | OFlags::NOCTTY
            | OFlags::NONBLOCK;
        let open = || rustix::fs::openat(parent.fd(), dir.name.as_c_str(), flags, Mode::empty());
        let mut opened = open();
        if matches!(opened, Err(Errno::MFILE)) && raise_fd_limit() {
            opened = open();
        }
        match opened {
            Ok(fd) => {
                if self.cfg.one_file_system {
                    match rustix::fs::fstat(&fd) {
                        Ok(st) if st.st_dev == dir.dev => {}
                        Ok(_) => {
                            self.report.skip_other_device(&dir.path());
                            dir.fail();
                            return self.release(dir, to);
                        }
                        Err(e) => {
                            self.report.error(&dir.path(), e.into());
                            dir.fail();
                            return self.release(dir, to);
                        }
                    }
                }
                let _ = dir.fd.set(fd);
                if self.cfg.prompt.active() && !self.may_descend(parent, &dir) {
                    // Declined: keep it and everything above it, silently.
                    dir.fail();
                } else {
                    self.scan(&dir, to);
                }
            }
            // Gone already: nothing to do, and not an error.
            Err(Errno::NOENT) => dir.state.store(HANDLED, Ordering::Release),
            // No longer a directory (a symlink or file was swapped in): remove
            // that entry itself, never what it points to.
            Err(Errno::NOTDIR | Errno::LOOP) => {
                dir.state.store(HANDLED, Ordering::Release);
                self.unlink_counted(parent, &dir.name, to);
            }
            // Unreadable: it may still be empty, as rm finds out.
            Err(e @ (Errno::ACCESS | Errno::PERM)) if !self.cfg.dry_run => {
                dir.state.store(HANDLED, Ordering::Release);
                match rustix::fs::unlinkat(parent.fd(), dir.name.as_c_str(), AtFlags::REMOVEDIR) {
                    Ok(()) => self.report.dir_removed(|| dir.path()),
                    Err(_) => {
                        self.report.error(&dir.path(), e.into());
                        parent.fail();
                    }
                }
            }
            Err(e) => {
                self.report.error(&dir.path(), e.into());
                dir.fail();
            }
        }
        self.release(dir, to);
    }

    /// Reads every entry of an open directory and deals with it:
    /// subdirectories become work at once; other entries are unlinked in
    /// batches of at most `BATCH`, in inode order when a batch is large (as
    /// GNU rm does, for locality on disk filesystems), or, in a small
    /// directory on tmpfs, each read's names before the next read. Memory
    /// stays bounded whatever the directory's size.
    fn scan<'s>(&'s self, dir: &Arc<Dir>, to: &Spawn<'_, 's>) {
        SCRATCH.with(|cell| {
            // A thread that waits in a parallel unlink (below) may be given
            // another directory to scan meanwhile, while its own buffers
            // are in use: that scan gets buffers of its own.
            let (mut guard, mut own);
            let scratch: &mut Scratch = match cell.try_borrow_mut() {
                Ok(g) => {
                    guard = g;
                    &mut guard
                }
                Err(_) => {
                    own = Scratch::default();
                    &mut own
                }
            };
            let Scratch { dirents, batch } = scratch;
            if dirents.len() < DIRENT_BUF {
                dirents.resize(DIRENT_BUF, MaybeUninit::uninit());
            }
            batch.clear();
            let in_memory = self.in_memory(dir.fd()) == Some(true);
            let len = match in_memory {
                true => DIRENT_BUF_IN_MEMORY,
                false => DIRENT_BUF,
            };
            let mut entries = RawDir::new(dir.fd(), &mut dirents[..len]);
            let mut n = 0u64;
            while let Some(entry) = entries.next() {
                let entry = match entry {
                    Ok(e) => e,
                    // Removed under us (getdents on a deleted directory).
                    Err(Errno::NOENT) => {
                        dir.state.store(HANDLED, Ordering::Release);
                        break;
                    }
                    Err(e) => {
                        self.report.error(&dir.path(), e.into());
                        dir.fail();
                        break;
                    }
                };
                let name = entry.file_name();
                if matches!(name.to_bytes(), b"." | b"..") {
                    continue;
                }
                n += 1;
                let kind = match entry.file_type() {
                    FileType::Unknown => {
                        match rustix::fs::statat(dir.fd(), name, AtFlags::SYMLINK_NOFOLLOW) {
                            Ok(st) => FileType::from_raw_mode(st.st_mode),
                            Err(Errno::NOENT) => continue,
                            Err(e) => {
                                self.report.error(&dir.entry_path(name), e.into());
                                dir.fail();
                                continue;
                            }
                        }
                    }
                    t => t,
                };
                if kind == FileType::Directory {
                    self.push(to, Dir::child(dir, name));
                } else {
                    batch.push(entry.ino(), name);
                    if batch.len() >= BATCH {
                        self.unlink_batch(dir, batch, to);
                    }
                }
                if in_memory && n < BUFFERED_UNTIL && entries.is_buffer_empty() && batch.len() > 0 {
                    self.unlink_batch(dir, batch, to);
                }
            }
            self.unlink_batch(dir, batch, to);
            self.seen.fetch_add(n, Ordering::Relaxed);
        });
    }

    fn unlink_batch<'s>(&'s self, dir: &Arc<Dir>, batch: &mut Batch, to: &Spawn<'_, 's>) {
        if batch.len() >= SORT_FROM {
            batch.sort_by_inode();
        }
        let parallel = batch.len() >= PAR_UNLINK_FROM
            && self.cfg.threads != Some(1)
            && !self.cfg.dry_run
            && !self.cfg.prompt.active();
        if parallel {
            let names: Vec<&CStr> = batch.names().collect();
            match (to, self.pool(dir.fd())) {
                (Spawn::Pool(s), _) => self.unlink_in_parallel(dir, &names, s),
                (Spawn::Local(_), Some(pool)) => {
                    pool.scope(|s| self.unlink_in_parallel(dir, &names, s));
                }
                (Spawn::Local(_), None) => {
                    let removed = names.iter().filter(|n| self.unlink_entry(dir, n, to));
                    self.report.files_removed(removed.count() as u64);
                }
            }
        } else {
            let removed = batch.names().filter(|n| self.unlink_entry(dir, n, to));
            self.report.files_removed(removed.count() as u64);
        }
        batch.clear();
    }

    /// Unlinks `names` of `dir` on all the pool's threads: chunks of names
    /// next to each other in inode order, handed out one at a time to
    /// whichever thread is free. An entry that turns out to be a directory
    /// becomes work in `s`.
    fn unlink_in_parallel<'s>(&'s self, dir: &Arc<Dir>, names: &[&CStr], s: &rayon::Scope<'s>) {
        use rayon::prelude::*;
        names.par_chunks(PAR_UNLINK_CHUNK).for_each(|chunk| {
            let removed = chunk
                .iter()
                .filter(|n| self.unlink_entry(dir, n, &Spawn::Pool(s)));
            self.report.files_removed(removed.count() as u64);
        });
    }

    /// [`unlink_entry`](Self::unlink_entry), counted at once.
    fn unlink_counted<'s>(&'s self, dir: &Arc<Dir>, name: &CStr, to: &Spawn<'_, 's>) {
        let removed = self.unlink_entry(dir, name, to);
        self.report.files_removed(u64::from(removed));
    }

    /// Removes one non-directory entry of `dir`, and says whether it did
    /// (or would, in a dry run); the caller counts it.
    ///
    /// Always inlined, so that the `unlinkat` of a batch is issued from the
    /// batch's own loop rather than from a call that returns right after it:
    /// on a 2-CPU AMD EPYC VM (kernel fc-v1098) that alone took the removal
    /// of 50k files on one CPU from 418 to 367 ms (rmz 355), with the same
    /// system calls in the same order; see DECISIONS.md.
    #[inline(always)]
    fn unlink_entry<'s>(&'s self, dir: &Arc<Dir>, name: &CStr, to: &Spawn<'_, 's>) -> bool {
        if self.cfg.dry_run {
            return match self.dry_check(dir, name) {
                Ok(()) => {
                    self.report.listed(false, || dir.entry_path(name));
                    true
                }
                Err(e) => {
                    self.report.error(&dir.entry_path(name), e.into());
                    dir.fail();
                    false
                }
            };
        }
        if self.cfg.prompt.active() && !self.may_unlink(dir, name) {
            dir.fail();
            return false;
        }
        match rustix::fs::unlinkat(dir.fd(), name, AtFlags::empty()) {
            Ok(()) => {
                self.report.listed(false, || dir.entry_path(name));
                return true;
            }
            Err(Errno::NOENT) => {}
            // It is a directory after all (swapped in, or d_type was wrong).
            Err(Errno::ISDIR) => self.push(to, Dir::child(dir, name)),
            Err(e) => {
                self.report.error(&dir.entry_path(name), e.into());
                dir.fail();
            }
        }
        false
    }

    /// Drops one unit of `dir`'s pending work; the last one removes it and
    /// climbs to its parent, and so on up. A loop, not recursion, so that a
    /// tree of any depth unwinds in constant stack.
    fn release<'s>(&'s self, mut dir: Arc<Dir>, to: &Spawn<'_, 's>) {
        loop {
            if dir.pending.fetch_sub(1, Ordering::AcqRel) != 1 {
                return;
            }
            let Some(parent) = dir.parent.clone() else {
                return;
            };
            match dir.state.load(Ordering::Acquire) {
                FAILED => parent.fail(),
                HANDLED => {}
                _ if self.cfg.dry_run => match self.dry_check(&parent, &dir.name) {
                    Ok(()) => self.report.dir_removed(|| dir.path()),
                    Err(e) => {
                        self.report.error(&dir.path(), e.into());
                        parent.fail();
                    }
                },
                _ if self.cfg.prompt.active() && !self.may_rmdir(&parent, &dir) => parent.fail(),
                _ => {
                    match rustix::fs::unlinkat(parent.fd(), dir.name.as_c_str(), AtFlags::REMOVEDIR)
                    {
                        Ok(()) => self.report.dir_removed(|| dir.path()),
                        Err(Errno::NOENT) => {}
                        // Something was created inside while we worked: scan again.
                        Err(e @ (Errno::NOTEMPTY | Errno::EXIST)) => {
                            if dir.rescans.fetch_add(1, Ordering::AcqRel) < MAX_RESCANS {
                                dir.pending.store(1, Ordering::Release);
                                return self.push(to, dir);
                            }
                            self.report.error(&dir.path(), e.into());
                            parent.fail();
                        }
                        Err(e) => {
                            self.report.error(&dir.path(), e.into());
                            parent.fail();
                        }
                    }
                }
            }
            dir = parent;
        }
    }
}

/// The dry run's prediction of what `unlinkat` would say, from what the
/// kernel checks: write and search permission on the directory (with the
/// effective ids, as the kernel uses; a read-only filesystem fails it too),
/// and, in a sticky directory, that the user owns the directory or the
/// entry. Root passes the first, and owns everything for the second.
/// Immutable and append-only attributes are not checked.
impl Engine<'_> {
    fn dry_check(&self, dir: &Dir, name: &CStr) -> Result<(), Errno> {
        let removable = dir.removable.get_or_init(|| {
            use rustix::fs::Access;
            rustix::fs::accessat(
                dir.fd(),
                c".",
                Access::WRITE_OK | Access::EXEC_OK,
                AtFlags::EACCESS,
            )?;
            let st = rustix::fs::fstat(dir.fd())?;
            let euid = rustix::process::geteuid();
            let sticky = Mode::from_raw_mode(st.st_mode).contains(Mode::SVTX);
            Ok((sticky && !euid.is_root() && st.st_uid != euid.as_raw()).then_some(euid.as_raw()))
        });
        match *removable {
            Err(e) => Err(e),
            Ok(None) => Ok(()),
            Ok(Some(euid)) => match rustix::fs::statat(dir.fd(), name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(st) if st.st_uid != euid => Err(Errno::PERM),
                _ => Ok(()),
            },
        }
    }
}

/// Questions, asked only when [`Prompt::active`] (a terminal user without
/// -f, or -i): they cost a syscall or two per entry, which the fast path
/// never pays.
impl Engine<'_> {
    /// Whether to unlink `name`, a non-directory of `dir`.
    fn may_unlink(&self, dir: &Dir, name: &CStr) -> bool {
        let p = self.cfg.prompt;
        let mut wp = p.write_protected && write_protected(dir.fd(), name);
        if !(p.always || wp) {
            return true;
        }
        // What it is, for the question (and symlinks are never
        // "write-protected": their own mode means nothing).
        let (kind, empty) = match rustix::fs::statat(dir.fd(), name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => (FileType::from_raw_mode(st.st_mode), st.st_size == 0),
            // Gone: let unlinkat find that out.
            Err(_) => return true,
        };
        if kind == FileType::Symlink {
            wp = false;
            if !p.always {
                return true;
            }
        }
        self.report.ask(&format!(
            "remove {}{} {}?",
            if wp { "write-protected " } else { "" },
            describe_kind(kind, empty),
            quote(&dir.entry_path(name))
        ))
    }

    /// Whether to read `dir` (open, in `parent`) and remove what is in it.
    /// An empty directory is not asked about here; its removal is.
    fn may_descend(&self, parent: &Dir, dir: &Dir) -> bool {
        let p = self.cfg.prompt;
        let wp = p.write_protected && write_protected(parent.fd(), &dir.name);
        if !(p.always || wp) || is_empty(dir.fd()) {
            return true;
        }
        self.report.ask(&format!(
            "descend into {}directory {}?",
            if wp { "write-protected " } else { "" },
            quote(&dir.path())
        ))
    }

    /// Whether to remove the (now empty) directory `dir` from `parent`.
    fn may_rmdir(&self, parent: &Dir, dir: &Dir) -> bool {
        let p = self.cfg.prompt;
        let wp = p.write_protected && write_protected(parent.fd(), &dir.name);
        if !(p.always || wp) {
            return true;
        }
        self.report.ask(&format!(
            "remove {}directory {}?",
            if wp { "write-protected " } else { "" },
            quote(&dir.path())
        ))
    }
}

/// Whether the user may not write to `name` in `dir` (rm's test: an access
/// check with the effective ids; only EACCES counts).
fn write_protected(dir: BorrowedFd<'_>, name: &CStr) -> bool {
    use rustix::fs::Access;
    matches!(
        rustix::fs::accessat(dir, name, Access::WRITE_OK, AtFlags::EACCESS),
        Err(Errno::ACCESS)
    )
}

/// Whether an open directory has no entries but `.` and `..`. Leaves the
/// offset at the start.
fn is_empty(fd: BorrowedFd<'_>) -> bool {
    let mut buf = [MaybeUninit::<u8>::uninit(); 1024];
    let mut entries = RawDir::new(fd, &mut buf);
    let mut empty = true;
    while let Some(Ok(e)) = entries.next() {
        if !matches!(e.file_name().to_bytes(), b"." | b"..") {
            empty = false;
            break;
        }
    }
    let _ = rustix::fs::seek(fd, SeekFrom::Start(0));
    empty
}

/// How rm names a kind of file in its questions.
fn describe_kind(kind: FileType, empty: bool) -> &'static str {
    match kind {
        FileType::RegularFile if empty => "regular empty file",
        FileType::RegularFile => "regular file",
        FileType::Directory => "directory",
        FileType::Symlink => "symbolic link",
        FileType::Fifo => "fifo",
        FileType::Socket => "socket",
        FileType::CharacterDevice => "character special file",
        FileType::BlockDevice => "block special file",
        FileType::Unknown => "file",
    }
}

/// Raises the soft open-file limit to the hard one, and says whether it
/// could: each directory in flight holds a descriptor, and a deep tree has
/// many in flight at once.
pub fn raise_fd_limit() -> bool {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let lim = getrlimit(Resource::Nofile);
    lim.current < lim.maximum
        && setrlimit(
            Resource::Nofile,
            Rlimit {
                current: lim.maximum,
                maximum: lim.maximum,
            },
        )
        .is_ok()
}

#[cfg(test)]
mod threads {
    use super::{default_threads, in_memory_fs};
    use std::os::fd::AsFd;

    #[test]
    fn a_run_goes_parallel_only_where_there_is_parallel_work() {
        use super::worth_a_pool;
        // A small tree stays on this thread, whatever its shape.
        assert!(!worth_a_pool(100, 50, 5));
        // Two directories to go.
        assert!(worth_a_pool(1000, 1, 2));
        // A chain: one directory to go below one that held files...
        assert!(worth_a_pool(1000, 200, 1));
        assert!(worth_a_pool(1000, 16, 1));
        // ...but not below a bare directory (or one of a few entries).
        assert!(!worth_a_pool(1000, 1, 1));
        assert!(!worth_a_pool(1000, 15, 1));
        // Nothing left to hand over.
        assert!(!worth_a_pool(100_000, 5000, 0));
    }

    #[test]
    fn one_thread_a_cpu_in_memory_and_one_more_elsewhere() {
        let cpus = std::thread::available_parallelism().map_or(1, usize::from);
        let shm = std::fs::File::open("/dev/shm").expect("/dev/shm (tmpfs)");
        assert_eq!(default_threads(in_memory_fs(shm.as_fd())), cpus);
        // procfs: neither tmpfs nor ramfs, on every Linux machine.
        let proc = std::fs::File::open("/proc").expect("/proc");
        assert_eq!(default_threads(in_memory_fs(proc.as_fd())), cpus + 1);
    }
}
