//! Where the daemon keeps its indexes between runs: a folder (0700) with
//! one index file per root and a list of the roots, so that a restarted
//! daemon maps them again instead of rebuilding.
//!
//! The list holds each root's path bytes followed by a NUL (paths cannot
//! hold one); it is replaced atomically, as the indexes are.

use anyhow::{Context, Result};
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// The index folder of one daemon.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

/// The folder for this user: `$XDG_CACHE_HOME/greppy`, or
/// `~/.cache/greppy`.
pub fn default_dir() -> PathBuf {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    match env("XDG_CACHE_HOME") {
        Some(d) => PathBuf::from(d).join("greppy"),
        None => PathBuf::from(env("HOME").unwrap_or_else(|| "/tmp".into())).join(".cache/greppy"),
    }
}

impl Store {
    /// The store in `dir`, made (0700) if it is not there.
    pub fn new(dir: PathBuf) -> Result<Store> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .with_context(|| format!("make {}", dir.display()))?;
        // Files a killed daemon was writing: never renamed into place, so
        // never read; removed.
        for e in std::fs::read_dir(&dir)?.flatten() {
            let name = e.file_name();
            let name = name.as_bytes();
            if name.starts_with(b".") && name.ends_with(b".tmp") {
                let _ = std::fs::remove_file(e.path());
            }
        }
        Ok(Store { dir })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn list(&self) -> PathBuf {
        self.dir.join("roots")
    }

    /// The roots saved by the last run.
    pub fn roots(&self) -> Vec<PathBuf> {
        std::fs::read(self.list())
            .unwrap_or_default()
            .split(|&b| b == 0)
            .filter(|r| !r.is_empty())
            .map(|r| PathBuf::from(std::ffi::OsString::from_vec(r.to_vec())))
            .collect()
    }

    /// Replaces the list of roots.
    pub fn set_roots<'a>(&self, roots: impl IntoIterator<Item = &'a Path>) -> Result<()> {
        let mut bytes = Vec::new();
        for r in roots {
            bytes.extend_from_slice(r.as_os_str().as_bytes());
            bytes.push(0);
        }
        let tmp = self.dir.join(format!(".roots.{}.tmp", std::process::id()));
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, self.list()).context("save the list of roots")
    }

    /// The index file of `root`.
    pub fn index_file(&self, root: &Path) -> PathBuf {
        let mut h = rustc_hash::FxHasher::default();
        root.as_os_str().as_bytes().hash(&mut h);
        let name = root
            .file_name()
            .map(|n| {
                n.to_string_lossy()
                    .replace(|c: char| !c.is_alphanumeric(), "_")
            })
            .unwrap_or_default();
        self.dir.join(format!("{name}-{:016x}.idx", h.finish()))
    }

    /// The ranked index folder of `root`.
    pub fn find_dir(&self, root: &Path) -> PathBuf {
        self.index_file(root).with_extension("find")
    }
}
