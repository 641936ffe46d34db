//! A tree's changes, from the kernel's inotify queue, read by whoever
//! needs them first: the root's watcher thread when the queue becomes
//! readable, or a search that must see every change made before it.
//!
//! The kernel queues a change's event before the system call that made it
//! returns. So a search that reads the queue empty (under the lock that
//! every reader holds while it reads and hands the events on) knows that
//! every change made before it asked has been handed to the updater; it
//! then waits only until the updater has applied that many. When nothing
//! changed (the common case) that is one `read` that finds nothing: no
//! file is written, and no thread is woken.
//!
//! `inotify` watches folders, not trees: every folder of the tree is
//! watched on its own ([`Watcher::add_tree`]). Links are not followed, as
//! the walk does not follow them. Opening and reading files is not
//! watched: every reader of the tree (rg, a build, the daemon's own
//! searches) would queue an event per file it opens.

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask};
use rustc_hash::FxHashMap;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};

/// What one event says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// This file or folder may have changed (been made, written, removed,
    /// renamed to or from here; a file: had its modes changed).
    Path(PathBuf),
    /// This folder's modes, owner or times changed: what is below it may
    /// have become readable or unreadable (the updater checks which; the
    /// index keeps copies of files, which must not answer for files rg
    /// can no longer read).
    Modes(PathBuf),
    /// The kernel's queue overflowed: events were lost, and everything may
    /// have changed.
    Overflow,
}

/// The events asked for on each folder.
fn mask() -> WatchMask {
    WatchMask::CREATE
        | WatchMask::DELETE
        | WatchMask::MODIFY
        | WatchMask::ATTRIB
        | WatchMask::MOVED_FROM
        | WatchMask::MOVED_TO
        | WatchMask::DELETE_SELF
        | WatchMask::MOVE_SELF
        | WatchMask::ONLYDIR
        | WatchMask::DONT_FOLLOW
}

/// An inotify instance watching the folders of one tree.
#[derive(Debug)]
pub struct Watcher {
    inotify: Inotify,
    /// The folder each watch is on.
    dirs: FxHashMap<WatchDescriptor, PathBuf>,
    buf: Vec<u8>,
}

impl Watcher {
    /// Watches `root` and every folder under it.
    pub fn new(root: &Path) -> io::Result<Watcher> {
        let mut w = Watcher {
            inotify: Inotify::init()?,
            dirs: FxHashMap::default(),
            buf: vec![0u8; 64 << 10],
        };
        // The root itself must be watched; a folder under it that cannot
        // be (unreadable, gone meanwhile) is left out, as the walk leaves
        // it out.
        w.watch(root)?;
        w.add_below(root);
        Ok(w)
    }

    /// Watches `dir` and every folder under it (a folder that appeared).
    /// Watching a folder that is watched already gives its watch its new
    /// name (a folder moved within the tree).
    pub fn add_tree(&mut self, dir: &Path) {
        if self.watch(dir).is_ok() {
            self.add_below(dir);
        }
    }

    fn watch(&mut self, dir: &Path) -> io::Result<()> {
        let wd = self.inotify.watches().add(dir, mask())?;
        self.dirs.insert(wd, dir.to_path_buf());
        Ok(())
    }

    /// Watches the folders under `dir`, depth first, without following
    /// links.
    fn add_below(&mut self, dir: &Path) {
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    let p = e.path();
                    if self.watch(&p).is_ok() {
                        stack.push(p);
                    }
                }
            }
        }
    }

    /// Stops watching the folders at and under `dir` (moved away: a move
    /// within the tree watches them again under their new names).
    fn forget_tree(&mut self, dir: &Path) {
        let mut watches = self.inotify.watches();
        self.dirs.retain(|wd, p| {
            let keep = !p.starts_with(dir);
            if !keep {
                let _ = watches.remove(wd.clone());
            }
            keep
        });
    }

    /// Reads every event queued now, without blocking, and hands each
    /// change to `take`; how many it handed on.
    pub fn drain(&mut self, mut take: impl FnMut(Change)) -> usize {
        let mut handed = 0;
        loop {
            let mut changes = Vec::new();
            let mut moved_away: Vec<PathBuf> = Vec::new();
            match self.inotify.read_events(&mut self.buf) {
                Ok(events) => {
                    for e in events {
                        if e.mask.contains(EventMask::Q_OVERFLOW) {
                            changes.push(Change::Overflow);
                            continue;
                        }
                        if e.mask.contains(EventMask::IGNORED) {
                            // The watch is gone (its folder was removed).
                            self.dirs.remove(&e.wd);
                            continue;
                        }
                        let Some(dir) = self.dirs.get(&e.wd) else {
                            continue;
                        };
                        let path = match e.name {
                            Some(n) => dir.join(n),
                            None => dir.clone(),
                        };
                        if e.mask.contains(EventMask::MOVED_FROM | EventMask::ISDIR) {
                            moved_away.push(path.clone());
                        }
                        if e.mask.contains(EventMask::ATTRIB | EventMask::ISDIR) {
                            changes.push(Change::Modes(path));
                        } else {
                            changes.push(Change::Path(path));
                        }
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // Empty (`WouldBlock`), or the instance failed: nothing
                // more to read now.
                Err(_) => return handed,
            }
            for d in moved_away {
                self.forget_tree(&d);
            }
            handed += changes.len();
            changes.into_iter().for_each(&mut take);
        }
    }

    /// The descriptor to wait on for events.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.inotify.as_fd()
    }
}
