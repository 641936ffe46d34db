//! Invoked under the name `rm`, fast-rm is rm: a directory needs -r, -R or
//! -d, and prompts, answers and `-v` lines are GNU rm's, byte for byte.
//! Each case runs GNU rm beside it on a twin tree.

mod common;

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A link named `rm` to fast-rm, in a folder of its own.
fn as_rm() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let link = d.path().join("rm");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fast-rm"), &link).unwrap();
    (d, link)
}

#[derive(Debug, PartialEq, Eq)]
struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `rm` found in `bin` (so that its name is `rm`, as when typed).
fn run(bin: &Path, dir: &Path, args: &[&str], input: &str) -> Out {
    run_in_locale(bin, dir, args, input, "C")
}

fn run_in_locale(bin: &Path, dir: &Path, args: &[&str], input: &str, locale: &str) -> Out {
    let mut child = Command::new("rm")
        .args(args)
        .env("PATH", bin)
        .current_dir(dir)
        .env("LC_ALL", locale)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A program that asks nothing may be gone before it is written to.
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    let out = child.wait_with_output().unwrap();
    Out {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Every path under `root`, relative, sorted.
fn listing(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.symlink_metadata().unwrap().is_dir() {
                stack.push(p.clone());
            }
            out.push(p.strip_prefix(root).unwrap().to_path_buf());
        }
    }
    out.sort();
    out
}

/// Builds the same tree twice, runs GNU rm in one and fast-rm (as rm) in
/// the other with the same arguments and answers, and asserts that they
/// say the same and leave the same.
fn same_as_gnu(build: impl Fn(&Path), args: &[&str], input: &str) -> Out {
    let (bin, _) = as_rm();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    build(a.path());
    build(b.path());
    let gnu = run(Path::new("/usr/bin"), a.path(), args, input);
    let mine = run(bin.path(), b.path(), args, input);
    assert_eq!(mine, gnu, "{args:?} with {input:?}");
    assert_eq!(
        listing(b.path()),
        listing(a.path()),
        "{args:?}: what is left"
    );
    mine
}

fn tree(d: &Path) {
    fs::create_dir_all(d.join("dir/sub")).unwrap();
    fs::write(d.join("dir/sub/f"), b"x").unwrap();
    fs::create_dir(d.join("empty")).unwrap();
    fs::write(d.join("file"), b"x").unwrap();
    fs::write(d.join("zero"), b"").unwrap();
    std::os::unix::fs::symlink("file", d.join("link")).unwrap();
}

#[test]
fn a_directory_needs_r_or_d() {
    let out = same_as_gnu(tree, &["dir"], "");
    assert_eq!(out.stderr, "rm: cannot remove 'dir': Is a directory\n");
    same_as_gnu(tree, &["file", "dir", "zero"], "");
    same_as_gnu(tree, &["-r", "dir"], "");
    same_as_gnu(tree, &["-R", "dir", "empty"], "");
    let out = same_as_gnu(tree, &["-d", "empty"], "");
    assert_eq!(out.code, Some(0));
    let out = same_as_gnu(tree, &["-d", "dir"], "");
    assert_eq!(out.stderr, "rm: cannot remove 'dir': Directory not empty\n");
    same_as_gnu(tree, &["--dir", "-v", "empty", "file"], "");
}

#[test]
fn verbose_lines_are_rms() {
    same_as_gnu(tree, &["-rv", "dir", "file", "link"], "");
    same_as_gnu(tree, &["-rv", "dir/", "empty///"], "");
    same_as_gnu(tree, &["-dv", "empty/"], "");
}

#[test]
fn dash_i_asks_rms_questions_and_takes_its_answers() {
    // Answers: yes to some, no to others, in rm's order of questions.
    for input in [
        "y\ny\ny\ny\ny\ny\ny\n",
        "n\nn\nn\nn\n",
        "y\nn\ny\nn\ny\nn\ny\n",
        "",
    ] {
        same_as_gnu(tree, &["-i", "file", "zero", "link"], input);
        same_as_gnu(tree, &["-ri", "dir"], input);
        same_as_gnu(tree, &["-di", "empty"], input);
        same_as_gnu(tree, &["--interactive=always", "-r", "dir", "file"], input);
    }
}

#[test]
fn dash_capital_i_asks_once_as_rm_does() {
    for input in ["y\n", "n\n", "", "Y\n", "yes\n", "x\n"] {
        same_as_gnu(tree, &["-I", "file", "zero"], input);
        same_as_gnu(tree, &["-I", "file", "zero", "link", "empty"], input);
        same_as_gnu(tree, &["-I", "-r", "dir"], input);
        same_as_gnu(tree, &["--interactive=once", "-R", "dir", "empty"], input);
    }
}

#[test]
fn fast_rm_takes_d_and_then_removes_empty_directories_only() {
    let d = tempfile::tempdir().unwrap();
    tree(d.path());
    let r = common::rm(d.path(), &["-d", "empty", "dir"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stderr,
        "fast-rm: cannot remove 'dir': Directory not empty\n"
    );
    assert!(!d.path().join("empty").exists());
    assert!(d.path().join("dir/sub/f").exists());
    // Without -d, fast-rm recurses by itself.
    let r = common::rm(d.path(), &["dir"]);
    assert_eq!(r.code, 0);
    assert!(!d.path().join("dir").exists());
}

#[test]
fn help_under_the_name_rm_speaks_of_rm() {
    let (bin, _) = as_rm();
    let d = tempfile::tempdir().unwrap();
    let out = run(bin.path(), d.path(), &["--help"], "");
    assert_eq!(out.code, Some(0));
    assert!(out.stdout.contains("Usage: rm "), "{}", out.stdout);
    assert!(
        out.stdout.contains("directories with -r, -R or -d"),
        "{}",
        out.stdout
    );
}

/// Names are quoted in messages as GNU rm quotes them (gnulib's
/// shell-escape style), in the C locale and in a UTF-8 one. Found by
/// tests/random_trees.rs: fast-rm wrote `'new\nline'` where rm writes
/// `'new'$'\n''line'`.
#[test]
fn names_are_quoted_as_rm_quotes_them() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let names: &[&[u8]] = &[
        b"plain",
        b"two words",
        b"it's",
        b"it's $HOME",
        b"new\nline",
        b"tab\tend\t",
        b"\xff\xfe",
        "\u{e9}t\u{e9}".as_bytes(),
        b"back\\slash",
        b"#hash",
        b"~tilde",
        b"{",
        b"a{b}",
        b"q?*[x]",
        b"\x01ctl",
        b"@at",
    ];
    let (bin, _) = as_rm();
    for locale in ["C", "C.UTF-8"] {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        for d in [a.path(), b.path()] {
            for n in names {
                fs::write(d.join(OsStr::from_bytes(n)), b"x").unwrap();
            }
        }
        let mut args: Vec<&str> = vec!["-v"];
        let ops: Vec<String> = names
            .iter()
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect();
        // (The name that is not UTF-8 is left, and fails in both.)
        for (n, o) in names.iter().zip(&ops) {
            if std::str::from_utf8(n).is_ok() {
                args.push(o);
            }
        }
        args.push("missing\nname");
        let gnu = run_in_locale(Path::new("/usr/bin"), a.path(), &args, "", locale);
        let mine = run_in_locale(bin.path(), b.path(), &args, "", locale);
        assert_eq!(mine, gnu, "LC_ALL={locale}");
        // A name that is not UTF-8, in a directory removed with -rv.
        for d in [a.path(), b.path()] {
            fs::create_dir(d.join("d")).unwrap();
            fs::write(d.join("d").join(OsStr::from_bytes(b"\xff\xfe")), b"x").unwrap();
        }
        let gnu = run_in_locale(Path::new("/usr/bin"), a.path(), &["-rv", "d"], "", locale);
        let mine = run_in_locale(bin.path(), b.path(), &["-rv", "d"], "", locale);
        assert_eq!(mine, gnu, "LC_ALL={locale}");
    }
}

/// A name with a slash after it must be a directory: rm keeps a file, a
/// dangling link or a link to a file so named ("Not a directory"; nothing
/// said under -f). fast-rm removed them. Found by tests/random_trees.rs.
#[test]
fn a_trailing_slash_on_what_is_not_a_directory_keeps_it() {
    let build = |d: &Path| {
        fs::write(d.join("file"), b"x").unwrap();
        std::os::unix::fs::symlink("nowhere", d.join("dangling")).unwrap();
        std::os::unix::fs::symlink("file", d.join("lfile")).unwrap();
        fs::create_dir(d.join("dir")).unwrap();
    };
    for flags in [&[][..], &["-f"], &["-r"], &["-rf"], &["-d"]] {
        for op in [
            "file/",
            "dangling/",
            "lfile/",
            "file//",
            "missing//",
            "dir//",
        ] {
            let mut args = flags.to_vec();
            args.push(op);
            same_as_gnu(build, &args, "");
        }
    }
}
