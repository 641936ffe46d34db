//! Random trees against GNU rm. Each seed builds a tree of directories,
//! files and symbolic links with random modes and names (and links that
//! point out of it), twice; GNU rm runs in one copy and fast-rm, invoked
//! as `rm`, in the other, with the same random arguments, as `nobody` when
//! the test runs as root so that the modes bite. Their exit statuses, what
//! is left and what they print must be the same, and a folder beside the
//! target, which links point into, must be untouched.
//! (Directories swapped for links while fast-rm runs: `tests/fault.rs`.)
//!
//! `FAST_RM_VS_RM_SEEDS=FROM..TO` runs other seeds (no time limit then).

mod common;

use common::{Node, give_away, is_root, snapshot};
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SEEDS: u64 = 200;
const BUDGET: Duration = Duration::from_secs(20);

/// Names a tree may use: ordinary, hidden, dashes, spaces, newlines,
/// bytes that are not UTF-8, and a name that looks like an option.
const NAMES: &[&[u8]] = &[
    b"a",
    b"b",
    b"sub",
    b".hidden",
    b"-n",
    b"two words",
    b"new\nline",
    b"\xff\xfe",
    b"--",
    b"f.txt",
];

/// Directory modes: ordinary, not writable (its entries stay), not
/// readable (it cannot be listed), not searchable, none at all.
const DIR_MODES: &[u32] = &[0o755, 0o755, 0o755, 0o555, 0o311, 0o644, 0o000, 0o1777];
const FILE_MODES: &[u32] = &[0o644, 0o444, 0o000, 0o4755];

/// Where links point: out of the tree (relative and absolute), up, at
/// itself, nowhere, and at a sibling.
fn link_target(rng: &mut fastrand::Rng, base: &Path) -> OsString {
    match rng.u8(..7) {
        0 => "../../outside".into(),
        1 => base.join("outside").into_os_string(),
        2 => base.join("outside/precious").into_os_string(),
        3 => "..".into(),
        4 => ".".into(),
        5 => "nowhere".into(),
        _ => "a".into(),
    }
}

/// One entry of a planned tree, relative to the target.
#[derive(Debug, Clone)]
enum Entry {
    Dir(PathBuf, u32),
    File(PathBuf, u32),
    Link(PathBuf, OsString),
}

/// A random tree below `target`, as a list of entries, parents first.
fn plan(rng: &mut fastrand::Rng, base: &Path) -> Vec<Entry> {
    let mut dirs = vec![PathBuf::new()];
    let mut taken = std::collections::BTreeSet::new();
    let mut out = Vec::new();
    for _ in 0..rng.usize(0..24) {
        let parent = dirs[rng.usize(..dirs.len())].clone();
        if parent.components().count() >= 4 {
            continue;
        }
        let path = parent.join(OsStr::from_bytes(NAMES[rng.usize(..NAMES.len())]));
        if !taken.insert(path.clone()) {
            continue;
        }
        match rng.u8(..10) {
            0..=3 => {
                dirs.push(path.clone());
                out.push(Entry::Dir(path, DIR_MODES[rng.usize(..DIR_MODES.len())]));
            }
            4..=7 => out.push(Entry::File(path, FILE_MODES[rng.usize(..FILE_MODES.len())])),
            _ => out.push(Entry::Link(path, link_target(rng, base))),
        }
    }
    out
}

/// Makes `base/target` from the plan and `base/outside` beside it; modes
/// last, deepest first, so that building is not stopped by them.
fn build(base: &Path, entries: &[Entry]) {
    let target = base.join("target");
    fs::create_dir_all(&target).unwrap();
    let outside = base.join("outside");
    fs::create_dir_all(outside.join("inner")).unwrap();
    fs::write(outside.join("precious"), b"keep me").unwrap();
    fs::write(outside.join("inner/also"), b"and me").unwrap();
    for e in entries {
        match e {
            Entry::Dir(p, _) => fs::create_dir(target.join(p)).unwrap(),
            Entry::File(p, _) => fs::write(target.join(p), b"x").unwrap(),
            Entry::Link(p, to) => symlink(to, target.join(p)).unwrap(),
        }
    }
    give_away(base);
    for e in entries.iter().rev() {
        match e {
            Entry::Dir(p, m) | Entry::File(p, m) => {
                fs::set_permissions(target.join(p), fs::Permissions::from_mode(*m)).unwrap();
            }
            Entry::Link(..) => {}
        }
    }
}

/// Random arguments: options and operands below `target` (some missing,
/// some with a trailing slash).
fn args(rng: &mut fastrand::Rng, entries: &[Entry]) -> Vec<OsString> {
    const OPTIONS: &[&[&str]] = &[
        &["-r"],
        &["-r"],
        &["-rf"],
        &["-R", "-v"],
        &["-rfv"],
        &["-d"],
        &["-dv"],
        &["-f"],
        &[],
        &["-r", "--one-file-system"],
        &["-r", "--preserve-root=all"],
    ];
    let mut out: Vec<OsString> = OPTIONS[rng.usize(..OPTIONS.len())]
        .iter()
        .map(OsString::from)
        .collect();
    for _ in 0..rng.usize(1..4) {
        let mut op = match rng.u8(..6) {
            0 | 1 => OsString::from("target"),
            2 => OsString::from("target/missing"),
            _ if !entries.is_empty() => {
                let e = &entries[rng.usize(..entries.len())];
                let (Entry::Dir(p, _) | Entry::File(p, _) | Entry::Link(p, _)) = e;
                Path::new("target").join(p).into_os_string()
            }
            _ => OsString::from("target"),
        };
        if rng.u8(..6) == 0 {
            op.push("/");
        }
        out.push(op);
    }
    out
}

/// What one rm did: its status, its lines (sorted: fast-rm works on
/// several threads, so its lines within one operand come in another order)
/// and what it left.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    code: Option<i32>,
    stdout: Vec<String>,
    stderr: Vec<String>,
    left: BTreeMap<PathBuf, Node>,
}

fn sorted_lines(b: &[u8]) -> Vec<String> {
    let mut v: Vec<String> = String::from_utf8_lossy(b)
        .lines()
        .map(String::from)
        .collect();
    v.sort();
    v
}

/// Runs `rm` found in `bin` in `base` (as `nobody` when we are root).
fn run(bin: &Path, base: &Path, args: &[OsString]) -> Outcome {
    let mut c = Command::new("rm");
    c.args(args)
        .env_clear()
        .env("PATH", bin)
        .env("LC_ALL", "C")
        .current_dir(base)
        .stdin(Stdio::null());
    if is_root() {
        c.uid(65534).gid(65534);
    }
    let out = c.output().unwrap();
    Outcome {
        code: out.status.code(),
        stdout: sorted_lines(&out.stdout),
        stderr: sorted_lines(&out.stderr),
        left: snapshot(&base.join("target")),
    }
}

/// Gives back every permission below `dir`, so that the folder can go.
fn unlock(dir: &Path) {
    let Ok(md) = fs::symlink_metadata(dir) else {
        return;
    };
    if md.is_dir() {
        let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o700));
        if let Ok(rd) = fs::read_dir(dir) {
            for e in rd.flatten() {
                unlock(&e.path());
            }
        }
    }
}

/// A folder holding a link named `rm` to fast-rm, searchable by `nobody`.
fn fast_rm_as_rm() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    symlink(env!("CARGO_BIN_EXE_fast-rm"), d.path().join("rm")).unwrap();
    fs::set_permissions(d.path(), fs::Permissions::from_mode(0o755)).unwrap();
    d
}

/// A scratch folder `nobody` can reach.
fn scratch() -> tempfile::TempDir {
    let d = tempfile::Builder::new()
        .prefix("fast-rm-random")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    fs::set_permissions(d.path(), fs::Permissions::from_mode(0o755)).unwrap();
    d
}

fn seeds() -> (std::ops::Range<u64>, Option<Duration>) {
    let Ok(v) = std::env::var("FAST_RM_VS_RM_SEEDS") else {
        return (0..SEEDS, Some(BUDGET));
    };
    let (a, b) = v
        .split_once("..")
        .unwrap_or_else(|| panic!("FAST_RM_VS_RM_SEEDS={v:?}: want FROM..TO"));
    let n = |x: &str| -> u64 { x.trim().parse().unwrap_or_else(|e| panic!("{x:?}: {e}")) };
    (n(a)..n(b), None)
}

#[test]
fn random_trees_end_as_gnu_rm_leaves_them() {
    let ours = fast_rm_as_rm();
    let gnu = Path::new("/usr/bin");
    assert!(gnu.join("rm").is_file(), "GNU rm is /usr/bin/rm");
    let start = Instant::now();
    let mut ran = 0;
    let mut differ = Vec::new();
    let (range, budget) = seeds();
    for seed in range {
        if budget.is_some_and(|b| start.elapsed() > b) {
            break;
        }
        let mut rng = fastrand::Rng::with_seed(seed);
        let (a, b) = (scratch(), scratch());
        let entries = plan(&mut rng, a.path());
        // The same plan, with absolute links into each copy's own outside.
        let entries_b = plan(&mut fastrand::Rng::with_seed(seed), b.path());
        let argv = args(&mut rng, &entries);
        build(a.path(), &entries);
        build(b.path(), &entries_b);
        let outside = snapshot(&b.path().join("outside"));
        // `link/`, a link to a directory: GNU rm -r empties the directory
        // it points to (even outside the target) and then fails on the
        // link; fast-rm removes the link alone, on purpose (README).
        // Only the folder outside is compared then.
        let deviates = argv.iter().any(|op| slashed_link_to_dir(b.path(), op));
        let theirs = run(gnu, a.path(), &argv);
        let mine = run(ours.path(), b.path(), &argv);
        ran += 1;
        assert_eq!(
            snapshot(&b.path().join("outside")),
            outside,
            "seed {seed}: fast-rm {argv:?} touched a file outside its target"
        );
        // Absolute links name their own copy: compare them as relative.
        let theirs = Outcome {
            left: relative_links(theirs.left, a.path(), b.path()),
            ..theirs
        };
        if mine != theirs && !deviates {
            differ.push(format!(
                "seed {seed}: rm {argv:?}\n  tree: {entries:?}\n  GNU rm:  {theirs:?}\n  fast-rm: {mine:?}"
            ));
        }
        unlock(a.path());
        unlock(b.path());
    }
    assert!(ran >= 50, "only {ran} trees in {BUDGET:?}");
    assert!(
        differ.is_empty(),
        "{} of {ran} trees differ:\n{}",
        differ.len(),
        differ.join("\n")
    );
}

/// Whether `op`, in `base`, is a link to a directory named with a slash.
fn slashed_link_to_dir(base: &Path, op: &OsStr) -> bool {
    let bytes = op.as_bytes();
    if !bytes.ends_with(b"/") {
        return false;
    }
    let end = bytes.iter().rposition(|&c| c != b'/').map_or(0, |i| i + 1);
    let bare = base.join(OsStr::from_bytes(&bytes[..end]));
    fs::symlink_metadata(&bare).is_ok_and(|m| m.file_type().is_symlink())
        && fs::metadata(&bare).is_ok_and(|m| m.is_dir())
}

/// `left` with the links that named `from` naming `to` instead.
fn relative_links(
    left: BTreeMap<PathBuf, Node>,
    from: &Path,
    to: &Path,
) -> BTreeMap<PathBuf, Node> {
    left.into_iter()
        .map(|(k, v)| match v {
            Node::Link(t) => match t.strip_prefix(from) {
                Ok(rest) => (k, Node::Link(to.join(rest))),
                Err(_) => (k, Node::Link(t)),
            },
            v => (k, v),
        })
        .collect()
}

/// Random trees while another thread renames inside them. A random tree,
/// each of its directories filled with files so that the run takes a
/// while, is removed by fast-rm (as `nobody`, with the tree's modes) while
/// a thread moves its directories about: to another name, into another
/// directory of the tree, or aside with a link to the folder outside put
/// in their place (a link that names `outside`, relative or absolute), and
/// back. Whatever the interleaving, the folder outside is untouched, and
/// fast-rm ends as rm ends, 0 or 1, with no panic. (What is left cannot be
/// compared with GNU rm's: it depends on the interleaving.)
#[test]
fn random_trees_under_concurrent_renames_touch_nothing_outside() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let ours = fast_rm_as_rm();
    let start = Instant::now();
    let (mut ran, mut moves) = (0, 0);
    for seed in 0..SEEDS {
        if start.elapsed() > BUDGET / 2 {
            break;
        }
        let mut rng = fastrand::Rng::with_seed(seed ^ 0xc0ffee);
        let s = scratch();
        let base = s.path().to_path_buf();
        let entries = plan(&mut rng, &base);
        let dirs: Vec<PathBuf> = std::iter::once(PathBuf::new())
            .chain(entries.iter().filter_map(|e| match e {
                Entry::Dir(p, _) => Some(p.clone()),
                _ => None,
            }))
            .collect();
        let mut full = entries.clone();
        for d in &dirs {
            let at = full
                .iter()
                .position(|e| matches!(e, Entry::Dir(p, _) if p == d))
                .map_or(0, |i| i + 1);
            let files = (0..150).map(|i| Entry::File(d.join(format!("f{i}")), 0o644));
            full.splice(at..at, files);
        }
        build(&base, &full);
        let outside = snapshot(&base.join("outside"));
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicUsize::new(0));
        let mover = {
            let (stop, done, base) = (stop.clone(), done.clone(), base.clone());
            let dirs: Vec<PathBuf> = dirs.into_iter().filter(|d| d.parent().is_some()).collect();
            std::thread::spawn(move || {
                let mut rng = fastrand::Rng::with_seed(seed);
                let target = base.join("target");
                while !stop.load(Ordering::Relaxed) && !dirs.is_empty() {
                    let d = target.join(&dirs[rng.usize(..dirs.len())]);
                    let aside = d.with_extension("moved");
                    if fs::rename(&d, &aside).is_err() {
                        std::thread::yield_now();
                        continue;
                    }
                    match rng.u8(..3) {
                        // A link to the folder outside in its place.
                        0 => {
                            let to = if rng.bool() {
                                base.join("outside")
                            } else {
                                PathBuf::from("../../../outside")
                            };
                            if symlink(&to, &d).is_ok() {
                                std::thread::yield_now();
                                let _ = fs::remove_file(&d);
                            }
                        }
                        // Into another directory of the tree, and back.
                        1 => {
                            let other = target.join(&dirs[rng.usize(..dirs.len())]);
                            let there = other.join("moved-in");
                            if fs::rename(&aside, &there).is_ok() {
                                std::thread::yield_now();
                                let _ = fs::rename(&there, &aside);
                            }
                        }
                        _ => std::thread::yield_now(),
                    }
                    let _ = fs::rename(&aside, &d);
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        let mut c = Command::new("rm");
        c.args(["-rf", "target"])
            .env_clear()
            .env("PATH", ours.path())
            .env("LC_ALL", "C")
            .current_dir(&base)
            .stdin(Stdio::null());
        if is_root() {
            c.uid(65534).gid(65534);
        }
        let out = c.output().unwrap();
        stop.store(true, Ordering::Relaxed);
        mover.join().unwrap();
        moves += done.load(Ordering::Relaxed);
        ran += 1;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            snapshot(&base.join("outside")),
            outside,
            "seed {seed}: a rename let fast-rm touch a file outside its target\n{stderr}"
        );
        assert!(
            matches!(out.status.code(), Some(0 | 1)) && !stderr.contains("panicked"),
            "seed {seed}: {:?}\n{stderr}",
            out.status
        );
        unlock(&base);
    }
    eprintln!("{ran} trees, {moves} moves");
    assert!(ran >= 10, "only {ran} trees in {:?}", BUDGET / 2);
    assert!(moves > 0, "the mover never moved a directory");
}
