//! Differential tests: the same tricky trees and arguments, once with GNU rm
//! and once with fast-rm; the outcome (what is left) and the exit code must
//! match.

mod common;

use common::{fast_rm, give_away, is_root, nested, snapshot};
use std::ffi::OsStr;
use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

type Build = fn(&Path);

fn tricky(base: &Path) {
    nested(&base.join("tree"), 12, 60);
    fs::create_dir_all(base.join("empty")).unwrap();
    fs::write(base.join("file"), b"data").unwrap();
    fs::write(base.join("empty-file"), b"").unwrap();
    fs::create_dir_all(base.join("keep/inner")).unwrap();
    fs::write(base.join("keep/inner/x"), b"x").unwrap();
    symlink("keep", base.join("link-to-dir")).unwrap();
    symlink("keep/inner/x", base.join("link-to-file")).unwrap();
    symlink("nowhere", base.join("dangling")).unwrap();
    let odd = base.join(OsStr::from_bytes(b"odd\nname\xff"));
    fs::create_dir_all(odd.join("sub")).unwrap();
    fs::write(odd.join(OsStr::from_bytes(b"\x01ctl")), b"").unwrap();
    fs::create_dir_all(base.join("a/b/c")).unwrap();
    fs::write(base.join("a/b/c/f"), b"").unwrap();
}

fn protected(base: &Path) {
    tricky(base);
    fs::create_dir_all(base.join("p/locked/deeper")).unwrap();
    fs::write(base.join("p/locked/f"), b"").unwrap();
    fs::write(base.join("p/ok"), b"").unwrap();
    give_away(base);
    fs::set_permissions(base, fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(base.join("p/locked"), fs::Permissions::from_mode(0o555)).unwrap();
}

/// (name, tree builder, arguments)
fn cases() -> Vec<(&'static str, Build, Vec<&'static [u8]>)> {
    vec![
        (
            "everything",
            tricky,
            vec![
                b"tree",
                b"empty",
                b"file",
                b"empty-file",
                b"link-to-dir",
                b"link-to-file",
                b"dangling",
                b"odd\nname\xff",
                b"a",
            ],
        ),
        (
            "links only",
            tricky,
            vec![b"link-to-dir", b"link-to-file", b"dangling"],
        ),
        (
            "missing among present",
            tricky,
            vec![b"file", b"missing", b"tree"],
        ),
        ("trailing slash on a dir", tricky, vec![b"tree/", b"a//"]),
        ("dot arguments", tricky, vec![b".", b"file", b"..", b"a/."]),
        ("child then parent", tricky, vec![b"a/b/c", b"a/b", b"a"]),
        (
            "through a symlinked parent",
            tricky,
            vec![b"link-to-dir/inner"],
        ),
        ("permission denied", protected, vec![b"p", b"tree"]),
    ]
}

/// Runs `program` in `base`; with `answer`, stdin says it to every question.
fn run(
    program: &mut Command,
    base: &Path,
    args: &[&[u8]],
    unprivileged: bool,
    answer: Option<&str>,
) -> i32 {
    program
        .current_dir(base)
        .stdin(if answer.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    program.args(args.iter().map(|a| OsStr::from_bytes(a)));
    if unprivileged && is_root() {
        program.uid(65534).gid(65534);
    }
    let mut child = program.spawn().unwrap();
    if let Some(a) = answer {
        let answers = format!("{a}\n").repeat(1000);
        // More answers than questions: the write may meet a closed pipe.
        let _ = child.stdin.take().unwrap().write_all(answers.as_bytes());
    }
    child.wait().unwrap().code().unwrap()
}

fn compare(flags: &[&str]) {
    compare_answering(flags, None);
}

fn compare_answering(flags: &[&str], answer: Option<&str>) {
    for (name, build, args) in cases() {
        let unprivileged = name == "permission denied";
        let (gnu, ours) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        build(gnu.path());
        build(ours.path());
        let mut rm = Command::new("rm");
        rm.arg("-r").args(flags);
        let gnu_code = run(&mut rm, gnu.path(), &args, unprivileged, answer);
        let mut us = fast_rm();
        us.args(flags);
        let our_code = run(&mut us, ours.path(), &args, unprivileged, answer);
        // Let the test clean up what permissions kept.
        for d in [gnu.path(), ours.path()] {
            let _ = fs::set_permissions(d.join("p/locked"), fs::Permissions::from_mode(0o755));
        }
        assert_eq!(our_code, gnu_code, "{name} {flags:?}: exit codes differ");
        assert_eq!(
            snapshot(ours.path()),
            snapshot(gnu.path()),
            "{name} {flags:?}: outcomes differ"
        );
    }
}

#[test]
fn same_outcome_as_gnu_rm() {
    compare(&[]);
}

#[test]
fn same_outcome_as_gnu_rm_forced() {
    compare(&["-f"]);
}

#[test]
fn same_outcome_as_gnu_rm_interactive_answering_yes() {
    compare_answering(&["-i"], Some("y"));
}

#[test]
fn same_outcome_as_gnu_rm_interactive_answering_no() {
    compare_answering(&["-i"], Some("n"));
}

#[test]
fn a_symlink_to_a_directory_with_a_trailing_slash_is_safer_than_gnu_rm() {
    // GNU rm -r follows `link/` and empties the directory it points to; we
    // remove the link and leave the directory alone.
    let s = tempfile::tempdir().unwrap();
    fs::create_dir_all(s.path().join("real/inside")).unwrap();
    symlink("real", s.path().join("link")).unwrap();
    let code = run(&mut fast_rm(), s.path(), &[b"link/"], false, None);
    assert_eq!(code, 0);
    assert!(s.path().join("real/inside").is_dir());
    assert!(fs::symlink_metadata(s.path().join("link")).is_err());
}
