//! Helpers for fast-rm's integration tests: real trees on tmpfs and on the
//! disk, the real binary, and snapshots to compare trees.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt, lchown, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The binary under test.
pub fn fast_rm() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fast-rm"));
    c.stdin(Stdio::null());
    c
}

/// A finished run.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Self {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

pub fn run_in(dir: &Path, args: &[&OsStr]) -> Run {
    fast_rm()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run fast-rm")
        .into()
}

/// `run_in` with string arguments.
pub fn rm(dir: &Path, args: &[&str]) -> Run {
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    run_in(dir, &args)
}

/// Scratch folders on both kinds of filesystem: tmpfs and the disk.
pub fn scratch() -> Vec<tempfile::TempDir> {
    let disk = tempfile::Builder::new()
        .prefix("fast-rm-test")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("disk scratch");
    let mut out = vec![disk];
    if Path::new("/dev/shm").is_dir() {
        out.push(
            tempfile::Builder::new()
                .prefix("fast-rm-test")
                .tempdir_in("/dev/shm")
                .unwrap(),
        );
    }
    out
}

/// What a tree holds, compared without following links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    File { bytes: Vec<u8>, mode: u32 },
    Dir { mode: u32 },
    Link(PathBuf),
    Other,
}

/// Every entry below `root` (and `root` itself as ""), with contents.
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Node> {
    let mut out = BTreeMap::new();
    walk(root, Path::new(""), &mut out);
    out
}

fn walk(base: &Path, rel: &Path, out: &mut BTreeMap<PathBuf, Node>) {
    let path = base.join(rel);
    let Ok(md) = fs::symlink_metadata(&path) else {
        return;
    };
    let mode = md.mode() & 0o7777;
    let node = if md.file_type().is_symlink() {
        Node::Link(fs::read_link(&path).unwrap())
    } else if md.is_dir() {
        let mut names: Vec<_> = fs::read_dir(&path)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        for n in names {
            walk(base, &rel.join(n), out);
        }
        Node::Dir { mode }
    } else if md.is_file() {
        Node::File {
            bytes: fs::read(&path).unwrap_or_default(),
            mode,
        }
    } else {
        Node::Other
    };
    out.insert(rel.to_path_buf(), node);
}

/// A nested tree: `dirs` directories, two levels deep, `files` files spread
/// over them, and a symlink in each directory.
pub fn nested(root: &Path, dirs: usize, files: usize) {
    fs::create_dir_all(root).unwrap();
    let per = dirs.isqrt().max(1);
    let mut made = Vec::new();
    for d in 0..dirs {
        let p = root.join(format!("d{}", d / per)).join(format!("e{d}"));
        fs::create_dir_all(&p).unwrap();
        // A link back up: following it would loop; it must just be unlinked.
        symlink("..", p.join("link")).unwrap();
        made.push(p);
    }
    for f in 0..files {
        fs::write(made[f % made.len()].join(format!("f{f}")), b"x").unwrap();
    }
}

/// A file outside the target that must survive everything.
pub struct Canary {
    pub dir: PathBuf,
    before: BTreeMap<PathBuf, Node>,
}

impl Canary {
    pub fn plant(dir: &Path) -> Self {
        fs::create_dir_all(dir.join("inner")).unwrap();
        fs::write(dir.join("precious"), b"keep me").unwrap();
        fs::write(dir.join("inner/also"), b"and me").unwrap();
        fs::set_permissions(dir.join("precious"), fs::Permissions::from_mode(0o644)).unwrap();
        Canary {
            dir: dir.to_path_buf(),
            before: snapshot(dir),
        }
    }

    pub fn assert_intact(&self) {
        assert_eq!(
            snapshot(&self.dir),
            self.before,
            "canary {} was touched",
            self.dir.display()
        );
    }
}

/// Whether we run as root (permissions do not stop root).
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// Makes `dir` and everything below it belong to `nobody` when we are root,
/// so that a run as `nobody` meets real permissions. Links are changed
/// themselves (`lchown`), never followed.
pub fn give_away(dir: &Path) {
    if !is_root() {
        return;
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        lchown(&p, Some(65534), Some(65534)).unwrap();
        if p.is_dir() && !p.is_symlink() {
            stack.extend(fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        }
    }
}

/// Whether `strace` can trace here: it must be installed (a missing one is
/// a broken test machine, so this panics), but a sandbox may forbid ptrace
/// (then `false`, and the caller skips, saying so).
pub fn strace_works() -> bool {
    let probe = Command::new("strace")
        .args(["-o", "/dev/null", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match probe {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            panic!("strace is not installed: apt-get install strace")
        }
        Ok(s) if s.success() => true,
        _ => {
            eprintln!("strace may not trace here (ptrace is forbidden): skipped");
            false
        }
    }
}
