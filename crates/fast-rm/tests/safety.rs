//! What fast-rm must never do, on tmpfs and on the disk.

mod common;

use common::{Canary, is_root, nested, rm, run_in, scratch, snapshot};
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;

#[test]
fn a_symlink_argument_removes_the_link_never_its_target() {
    for s in scratch() {
        let base = s.path();
        let canary = Canary::plant(&base.join("target-dir"));
        symlink(base.join("target-dir"), base.join("link")).unwrap();
        symlink(base.join("target-dir"), base.join("link2")).unwrap();
        fs::write(base.join("file"), b"f").unwrap();
        symlink(base.join("file"), base.join("filelink")).unwrap();
        // Trailing slashes name the link too: it goes, the directory stays.
        let r = rm(base, &["link", "link2/", "filelink"]);
        assert_eq!(r.code, 0, "{r:?}");
        for l in ["link", "link2", "filelink"] {
            assert!(
                fs::symlink_metadata(base.join(l)).is_err(),
                "{l} is still there"
            );
        }
        canary.assert_intact();
        assert_eq!(fs::read(base.join("file")).unwrap(), b"f");
    }
}

#[test]
fn symlink_entries_are_removed_not_followed() {
    for s in scratch() {
        let base = s.path();
        let canary = Canary::plant(&base.join("outside"));
        let t = base.join("t");
        fs::create_dir_all(t.join("deep/er")).unwrap();
        symlink(base.join("outside"), t.join("to-dir")).unwrap();
        symlink(base.join("outside/precious"), t.join("deep/to-file")).unwrap();
        symlink(base.join("outside"), t.join("deep/er/to-dir")).unwrap();
        symlink("dangling-nowhere", t.join("dangling")).unwrap();
        let r = rm(base, &["t"]);
        assert_eq!(r.code, 0, "{r:?}");
        assert!(!t.exists());
        canary.assert_intact();
    }
}

#[test]
fn root_in_every_spelling_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    for spelling in ["/", "//", "///", "/./"] {
        // With -r, rm -r's words; without it, rm's (it would not recurse).
        let r = rm(dir.path(), &["-r", spelling]);
        assert_eq!(r.code, 1, "{spelling}: {r:?}");
        let expect = if spelling == "/./" {
            "refusing to remove '.' or '..'"
        } else {
            "dangerous"
        };
        assert!(r.stderr.contains(expect), "{spelling}: {}", r.stderr);
        let r = rm(dir.path(), &[spelling]);
        assert_eq!(r.code, 1, "{spelling}: {r:?}");
        assert_eq!(
            r.stderr,
            format!("fast-rm: cannot remove '{spelling}': Is a directory\n")
        );
        // Also under -f, and in a dry run.
        assert_eq!(rm(dir.path(), &["-rf", spelling]).code, 1);
        assert_eq!(rm(dir.path(), &["-n", spelling]).code, 1);
    }
    let r = rm(dir.path(), &["-r", "/"]);
    assert!(r.stderr.contains("--no-preserve-root"), "{}", r.stderr);
}

/// The words GNU rm uses for `/`, `.` and `..`, with and without -r.
#[test]
fn refusals_are_worded_as_gnu_rm_words_them() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["/"][..],
        &["-r", "/"],
        &["."],
        &["-r", "."],
        &[".."],
        &["-r", ".."],
    ] {
        let Ok(gnu) = std::process::Command::new("rm")
            .args(args)
            .current_dir(dir.path())
            .output()
        else {
            return;
        };
        let ours = rm(dir.path(), args);
        let gnu: common::Run = gnu.into();
        assert_eq!(ours.code, gnu.code, "{args:?}");
        assert_eq!(
            ours.stderr.replace("fast-rm:", "rm:"),
            gnu.stderr,
            "{args:?}"
        );
    }
}

#[test]
fn dot_and_dotdot_are_refused_always_and_the_rest_still_goes() {
    for s in scratch() {
        let base = s.path();
        let canary = Canary::plant(&base.join("a"));
        fs::write(base.join("x"), b"x").unwrap();
        for spelling in [".", "..", "./", "a/.", "a/..", "a/../", "/tmp/..", "/.."] {
            let r = rm(base, &["-r", "--no-preserve-root", spelling]);
            assert_eq!(r.code, 1, "{spelling}: {r:?}");
            assert!(
                r.stderr.contains("refusing to remove '.' or '..'"),
                "{}",
                r.stderr
            );
            let r = rm(base, &["--no-preserve-root", spelling]);
            assert_eq!(r.code, 1, "{spelling}: {r:?}");
            assert!(r.stderr.contains("Is a directory"), "{}", r.stderr);
        }
        let r = rm(base, &[".", "x"]);
        assert_eq!(r.code, 1);
        assert!(!base.join("x").exists(), "the other argument is removed");
        canary.assert_intact();
    }
}

/// A tmpfs mounted for the length of a test.
struct Mount(std::path::PathBuf);

impl Mount {
    fn new(at: &Path) -> Option<Self> {
        fs::create_dir_all(at).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "fast-rm-test"])
            .arg(at)
            .status();
        ok.is_ok_and(|s| s.success())
            .then(|| Mount(at.to_path_buf()))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn preserve_root_all_refuses_a_mount_point() {
    if !is_root() {
        eprintln!("skipped: mounting needs root");
        return;
    }
    for s in scratch() {
        let m = s.path().join("m");
        let Some(_mount) = Mount::new(&m) else {
            eprintln!("skipped: mount failed");
            return;
        };
        let canary = Canary::plant(&m.join("data"));
        let r = rm(s.path(), &["--preserve-root=all", "m"]);
        assert_eq!(r.code, 1, "{r:?}");
        assert!(r.stderr.contains("different device"), "{}", r.stderr);
        assert!(r.stderr.contains("--preserve-root=all"), "{}", r.stderr);
        canary.assert_intact();
    }
}

#[test]
fn one_file_system_skips_a_mounted_directory_and_removes_the_rest() {
    if !is_root() {
        eprintln!("skipped: mounting needs root");
        return;
    }
    for s in scratch() {
        let t = s.path().join("t");
        nested(&t.join("local"), 4, 20);
        let Some(_mount) = Mount::new(&t.join("mnt")) else {
            eprintln!("skipped: mount failed");
            return;
        };
        let canary = Canary::plant(&t.join("mnt/data"));
        let r = rm(s.path(), &["--one-file-system", "t"]);
        assert_eq!(r.code, 1, "{r:?}");
        assert!(
            r.stderr
                .contains("skipping 't/mnt', since it's on a different device"),
            "{}",
            r.stderr
        );
        canary.assert_intact();
        assert!(!t.join("local").exists(), "the same-device part is removed");
        assert_eq!(
            fs::read_dir(&t).unwrap().count(),
            1,
            "only the mount point is left"
        );
    }
}

#[test]
fn strange_names_are_removed() {
    for s in scratch() {
        let base = s.path();
        let t = base.join("t");
        let odd: [&[u8]; 6] = [
            b"new\nline",
            b"\xff\xfe-not-utf8",
            b"-f",
            b" lead space",
            b"tab\there",
            b"*",
        ];
        fs::create_dir_all(&t).unwrap();
        for name in odd {
            let p = t.join(OsStr::from_bytes(name));
            fs::create_dir(&p).unwrap();
            fs::write(p.join(OsStr::from_bytes(name)), b"x").unwrap();
        }
        // Names given directly as arguments, too.
        let arg = base.join(OsStr::from_bytes(b"arg\n\xff"));
        fs::write(&arg, b"x").unwrap();
        let r = run_in(base, &[OsStr::new("--"), OsStr::new("t"), arg.as_os_str()]);
        assert_eq!(r.code, 0, "{r:?}");
        assert!(!t.exists() && !arg.exists());
    }
}

#[test]
fn overlapping_arguments_are_removed_once_and_later_ones_fail_as_in_rm() {
    for s in scratch() {
        let base = s.path();
        for args in [
            &["a", "a/b", "a/b/c", "a"][..],
            &["a/b/c", "a/b", "a"],
            &["a/b", "./a", "a//b/", "a"],
        ] {
            // With -f: silent, and each entry removed once.
            nested(&base.join("a/b/c"), 3, 9);
            let n = snapshot(&base.join("a")).len() as u64;
            let mut full = vec!["-f", "--json"];
            full.extend_from_slice(args);
            let r = rm(base, &full);
            assert_eq!(r.code, 0, "{args:?}: {r:?}");
            assert!(r.stderr.is_empty(), "{args:?}: {}", r.stderr);
            assert!(!base.join("a").exists());
            let json: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
            let removed = json["files"].as_u64().unwrap() + json["dirs"].as_u64().unwrap();
            assert_eq!(removed, n, "{args:?}: each entry removed once");
            // Without: an argument an earlier one removed is an error, as
            // GNU rm -r says it, in the arguments' order.
            nested(&base.join("a/b/c"), 3, 9);
            let ours = rm(base, args);
            assert!(!base.join("a").exists());
            nested(&base.join("a/b/c"), 3, 9);
            let gnu = Command::new("rm")
                .arg("-r")
                .args(args)
                .current_dir(base)
                .output()
                .unwrap();
            assert_eq!(Some(ours.code), gnu.status.code(), "{args:?}: {ours:?}");
            assert_eq!(
                ours.stderr.replace("fast-rm: ", "rm: "),
                String::from_utf8_lossy(&gnu.stderr),
                "{args:?}"
            );
        }
    }
}

#[test]
fn a_dry_run_leaves_the_tree_byte_identical_and_counts_like_a_real_run() {
    for s in scratch() {
        let base = s.path();
        let t = base.join("t");
        nested(&t, 30, 300);
        fs::write(base.join("lonely"), b"file arg").unwrap();
        symlink("t", base.join("argument-link")).unwrap();
        let before = snapshot(base);
        let args = ["--json", "t", "lonely", "argument-link", "missing"];
        let dry = rm(base, &[&["-n"][..], &args].concat());
        assert_eq!(snapshot(base), before, "a dry run touched the tree");
        let real = rm(base, &args);
        let (d, r): (serde_json::Value, serde_json::Value) = (
            serde_json::from_str(&dry.stdout).unwrap(),
            serde_json::from_str(&real.stdout).unwrap(),
        );
        assert_eq!(d["dry_run"], true);
        for k in ["files", "dirs", "errors"] {
            assert_eq!(
                d[k], r[k],
                "{k}: dry {} vs real {}",
                dry.stdout, real.stdout
            );
        }
        assert_eq!(
            d["files"].as_u64().unwrap(),
            300 + 30 + 2,
            "files, links and the two arguments"
        );
        assert_eq!((dry.code, real.code), (1, 1), "'missing' fails both");
        assert!(!t.exists());
    }
}

#[test]
fn a_dry_run_lists_what_would_go_with_v_only() {
    let s = tempfile::tempdir().unwrap();
    fs::create_dir_all(s.path().join("t/sub")).unwrap();
    fs::write(s.path().join("t/sub/f"), b"").unwrap();
    let r = rm(s.path(), &["-n", "-v", "t"]);
    assert_eq!(r.code, 0);
    assert_eq!(
        r.stdout,
        "would remove 't/sub/f'\nwould remove directory 't/sub'\nwould remove directory 't'\n"
    );
    assert!(
        r.stderr.contains("would remove 1 files and 2 directories"),
        "{}",
        r.stderr
    );
    // Without -v, as rm: no listing, only the count.
    let r = rm(s.path(), &["-n", "t"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    assert_eq!(
        r.stderr,
        "fast-rm: dry run: would remove 1 files and 2 directories\n"
    );
    // With --json: the document on stdout, nothing on stderr, even with -v.
    let r = rm(s.path(), &["-n", "-v", "--json", "t"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    let j: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        (j["files"].as_u64(), j["dirs"].as_u64()),
        (Some(1), Some(2))
    );
    assert!(s.path().join("t/sub/f").exists());
}
