//! What may be removed: checks on each command-line argument before it is
//! touched.

use crate::cli::PreserveRoot;
use crate::engine::Root;
use crate::report::{describe, quote};
use rustix::fs::{AtFlags, CWD, FileType};
use rustix::io::Errno;
use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Why an argument is not removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Missing under --force: not an error, says nothing.
    Missing,
    /// An error message (without the program name).
    Error(Vec<String>),
}

/// A checked argument.
#[derive(Debug)]
pub struct Checked {
    pub root: Root,
    pub is_dir: bool,
}

fn err(msg: String) -> Refusal {
    Refusal::Error(vec![msg])
}

/// Checks one argument and opens its parent.
///
/// `recursive`: `-r` was given. fast-rm always recurses, but GNU rm words
/// the refusal of `.`, `..` and `/` differently without it (`Is a
/// directory`), and scripts match on rm's words.
pub fn check(
    arg: &OsStr,
    force: bool,
    preserve: Option<PreserveRoot>,
    recursive: bool,
) -> Result<Checked, Refusal> {
    let shown = &shown(arg);
    let bytes = arg.as_bytes();
    if bytes.is_empty() {
        return Err(err("cannot remove '': No such file or directory".into()));
    }
    // Trailing slashes go: `link/` names the link, which is removed, never
    // the directory it points to.
    let trimmed = {
        let mut end = bytes.len();
        while end > 1 && bytes[end - 1] == b'/' {
            end -= 1;
        }
        &bytes[..end]
    };
    let is_root_spelling = trimmed.iter().all(|&b| b == b'/');
    let (prefix, base): (&[u8], &[u8]) = if is_root_spelling {
        (b"/", b".")
    } else {
        match trimmed.iter().rposition(|&b| b == b'/') {
            Some(i) => (&trimmed[..=i], &trimmed[i + 1..]),
            None => (b"", trimmed),
        }
    };
    if !is_root_spelling && matches!(base, b"." | b"..") {
        if !recursive {
            return Err(err(format!(
                "cannot remove {}: Is a directory",
                quote(shown)
            )));
        }
        return Err(err(format!(
            "refusing to remove '.' or '..' directory: skipping {}",
            quote(shown)
        )));
    }
    let path = Path::new(OsStr::from_bytes(trimmed));
    let st = match rustix::fs::statat(CWD, path, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => st,
        // rm -f says nothing of what is not there, nor of a path through
        // a file (`file/x`).
        Err(Errno::NOENT | Errno::NOTDIR) if force => return Err(Refusal::Missing),
        Err(e) => {
            return Err(err(format!(
                "cannot remove {}: {}",
                quote(shown),
                describe(&e.into())
            )));
        }
    };
    let is_dir = FileType::from_raw_mode(st.st_mode) == FileType::Directory;
    // `file/`, `dangling-link/`: a name with a slash after it must be a
    // directory, and rm keeps what is not one ("Not a directory"; silent
    // under -f). A link to a directory is handled below: the link goes.
    let slashed = !is_root_spelling && bytes.len() > trimmed.len();
    if slashed && !is_dir && !names_a_directory(path) {
        if force {
            return Err(Refusal::Missing);
        }
        return Err(err(format!(
            "cannot remove {}: Not a directory",
            quote(shown)
        )));
    }
    if is_dir && preserve.is_some() {
        let root = rustix::fs::stat("/")
            .map_err(|e| err(format!("cannot stat '/': {}", describe(&e.into()))))?;
        if (st.st_dev, st.st_ino) == (root.st_dev, root.st_ino) {
            if !recursive {
                return Err(err(format!(
                    "cannot remove {}: Is a directory",
                    quote(shown)
                )));
            }
            let mut lines = vec![format!(
                "it is dangerous to operate recursively on {}",
                quote(shown)
            )];
            if trimmed != b"/" {
                lines[0].push_str(" (same as '/')");
            }
            lines.push("use --no-preserve-root to override this failsafe".into());
            return Err(Refusal::Error(lines));
        }
        if preserve == Some(PreserveRoot::All) {
            let up = Path::new(OsStr::from_bytes(trimmed)).join("..");
            // rm's words, without the reason.
            let parent_dev = rustix::fs::stat(&up).map(|p| p.st_dev).map_err(|_| {
                err(format!(
                    "failed to stat {}: skipping {}",
                    quote(&up),
                    quote(shown)
                ))
            })?;
            if parent_dev != st.st_dev {
                return Err(Refusal::Error(vec![
                    format!(
                        "skipping {}, since it's on a different device",
                        quote(shown)
                    ),
                    "and --preserve-root=all is in effect".into(),
                ]));
            }
        }
    }
    let parent = if prefix.is_empty() {
        Path::new(".")
    } else {
        Path::new(OsStr::from_bytes(prefix))
    };
    let base = CString::new(base)
        .map_err(|_| err(format!("cannot remove {}: invalid name", quote(shown))))?;
    // `rm -v a///` says "removed directory 'a/'": one slash is shown.
    let slashes = usize::from(slashed);
    let root =
        Root::new(parent, prefix.to_vec(), base, is_dir, st.st_dev, slashes).map_err(|e| {
            err(format!(
                "cannot remove {}: {}",
                quote(shown),
                describe(&e.into())
            ))
        })?;
    Ok(Checked { root, is_dir })
}

/// Whether `path`, links followed, is a directory.
fn names_a_directory(path: &Path) -> bool {
    rustix::fs::statat(CWD, path, AtFlags::empty())
        .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Directory)
}

/// Whether the directory `path` may have an entry: it has one, or it
/// cannot be read (rm -d then says "Directory not empty" too, without
/// trying).
pub fn may_have_entries(path: &OsStr) -> bool {
    std::fs::read_dir(path).map_or(true, |mut d| d.next().is_some())
}

/// An argument as rm's messages show it: trailing slashes made one
/// (gnulib's `fts_open` trims them so).
pub fn shown(arg: &OsStr) -> PathBuf {
    let bytes = arg.as_bytes();
    let end = bytes.iter().rposition(|&b| b != b'/').map_or(0, |i| i + 1);
    if end == 0 || end + 1 >= bytes.len() {
        // `/`, `///`, no slash or one: as given.
        return PathBuf::from(arg);
    }
    PathBuf::from(OsStr::from_bytes(&bytes[..=end]))
}
