//! The fast-rm benchmark: trees of real files, rebuilt before every run, and
//! the floor: an `unlinkat` loop over the same tree.

pub mod bench;

use rustix::fs::{AtFlags, Mode, OFlags, mkdirat, openat, unlinkat};
use std::ffi::CString;
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::path::Path;

/// The shape of a tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Files spread over about 1000 directories, two levels deep.
    Nested,
    /// Every file in one directory.
    Flat,
    /// A chain of directories, files spread along it.
    Deep,
}

impl Shape {
    pub fn name(self) -> &'static str {
        match self {
            Shape::Nested => "nested",
            Shape::Flat => "flat",
            Shape::Deep => "deep",
        }
    }

    /// The shape of this [`name`](Self::name).
    pub fn from_name(name: &str) -> Option<Self> {
        [Shape::Nested, Shape::Flat, Shape::Deep]
            .into_iter()
            .find(|s| s.name() == name)
    }

    /// How many directories below the root a tree of `n` files has.
    pub fn dirs(self, n: usize) -> usize {
        match self {
            Shape::Nested => n.div_ceil(10).min(1000),
            Shape::Flat => 0,
            Shape::Deep => (n / 20).clamp(1, 500).min(n),
        }
    }
}

const DIR_FLAGS: OFlags = OFlags::DIRECTORY
    .union(OFlags::RDONLY)
    .union(OFlags::CLOEXEC);

/// Every file holds this much: small, like most of a build tree.
const FILE_BYTES: &[u8] = &[b'x'; 64];

fn dir_at(parent: &OwnedFd, name: &str) -> io::Result<OwnedFd> {
    mkdirat(parent, name, Mode::from_bits_truncate(0o755))?;
    Ok(openat(
        parent,
        name,
        OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// Builds `root` (which must not exist) as a tree of `shape` with `n` files.
pub fn build(root: &Path, shape: Shape, n: usize) -> io::Result<()> {
    std::fs::create_dir(root)?;
    let top = rustix::fs::open(
        root,
        OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let dirs = shape.dirs(n);
    let mut holders: Vec<OwnedFd> = Vec::with_capacity(dirs.max(1));
    match shape {
        Shape::Flat => {}
        Shape::Nested => {
            let per = dirs.isqrt().max(1);
            let mut parent: Option<OwnedFd> = None;
            for d in 0..dirs {
                if d % per == 0 {
                    parent = Some(dir_at(&top, &format!("p{}", d / per))?);
                }
                holders.push(dir_at(
                    parent.as_ref().expect("set at d = 0"),
                    &format!("d{d}"),
                )?);
            }
        }
        Shape::Deep => {
            for d in 0..dirs {
                let next = dir_at(holders.last().unwrap_or(&top), &format!("level{d}"))?;
                holders.push(next);
            }
        }
    }
    if holders.is_empty() {
        holders.push(top);
    }
    for f in 0..n {
        let fd = openat(
            &holders[f % holders.len()],
            format!("file{f}.o"),
            OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::CLOEXEC,
            Mode::from_bits_truncate(0o644),
        )?;
        std::fs::File::from(fd).write_all(FILE_BYTES)?;
    }
    Ok(())
}

/// A tree listed ahead of time (untimed), so that removing it is nothing but
/// `unlinkat` calls in a tight loop on descriptors already open: the floor.
#[derive(Debug)]
pub struct Listing {
    fds: Vec<OwnedFd>,
    /// (index of the directory's fd, name, is a directory), children first.
    steps: Vec<(usize, CString, bool)>,
}

impl Listing {
    /// Lists `root` and opens its parent and every directory in it,
    /// through directory descriptors (a tree may be deeper than PATH_MAX).
    pub fn of(root: &Path) -> io::Result<Self> {
        let parent = root
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let name = root
            .file_name()
            .ok_or_else(|| io::Error::other("root has no name"))?;
        let parent_fd = rustix::fs::open(parent, DIR_FLAGS, Mode::empty())?;
        let mut l = Listing {
            fds: vec![parent_fd],
            steps: Vec::new(),
        };
        l.walk(
            0,
            CString::new(name.as_encoded_bytes()).map_err(io::Error::other)?,
        )?;
        Ok(l)
    }

    /// Opens `name` in directory `parent` and lists it, children first.
    fn walk(&mut self, parent: usize, name: CString) -> io::Result<()> {
        let me = self.fds.len();
        let fd = openat(&self.fds[parent], name.as_c_str(), DIR_FLAGS, Mode::empty())?;
        let entries = rustix::fs::Dir::read_from(&fd)?;
        self.fds.push(fd);
        for e in entries {
            let e = e?;
            let n = e.file_name();
            if matches!(n.to_bytes(), b"." | b"..") {
                continue;
            }
            if e.file_type() == rustix::fs::FileType::Directory {
                self.walk(me, n.to_owned())?;
            } else {
                self.steps.push((me, n.to_owned(), false));
            }
        }
        self.steps.push((parent, name, true));
        Ok(())
    }

    /// Removes everything listed.
    pub fn remove(self) -> io::Result<()> {
        for (fd, name, dir) in &self.steps {
            let flags = if *dir {
                AtFlags::REMOVEDIR
            } else {
                AtFlags::empty()
            };
            unlinkat(&self.fds[*fd], name.as_c_str(), flags)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_hold_what_they_say() {
        let s = tempfile::tempdir().unwrap();
        for (shape, n) in [
            (Shape::Nested, 1000),
            (Shape::Flat, 300),
            (Shape::Deep, 400),
            (Shape::Deep, 10_000),
            (Shape::Nested, 0),
        ] {
            let root = s.path().join(format!("{}-{n}", shape.name()));
            build(&root, shape, n).unwrap();
            let listing = Listing::of(&root).unwrap();
            let files = listing.steps.iter().filter(|s| !s.2).count();
            let dirs = listing.steps.iter().filter(|s| s.2).count() - 1;
            assert_eq!(files, n, "{shape:?}");
            let extra_parents = if shape == Shape::Nested {
                shape.dirs(n).div_ceil(shape.dirs(n).isqrt().max(1))
            } else {
                0
            };
            assert_eq!(dirs, shape.dirs(n) + extra_parents, "{shape:?} {n}");
            listing.remove().unwrap();
            assert!(!root.exists());
        }
    }
}
