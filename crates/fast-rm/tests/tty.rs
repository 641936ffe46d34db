//! What happens on a terminal: the -I prompt and the progress display, under
//! a real pseudo-terminal (util-linux `script`).

mod common;

use common::{fast_rm, give_away, is_root, nested};
use std::fs;
use std::io::Write;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs fast-rm with `args` on a pseudo-terminal in `dir`, typing `input`.
fn on_tty(dir: &Path, args: &str, input: &str, env: &[(&str, &str)]) -> (i32, String) {
    on_tty_as(dir, args, input, env, false)
}

/// `on_tty`, as the unprivileged user `nobody` if `unprivileged` and we are
/// root.
fn on_tty_as(
    dir: &Path,
    args: &str,
    input: &str,
    env: &[(&str, &str)],
    unprivileged: bool,
) -> (i32, String) {
    let bin = fast_rm().get_program().to_string_lossy().into_owned();
    let mut c = Command::new("script");
    c.current_dir(dir)
        .args(["-qec", &format!("'{bin}' {args}"), "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    if unprivileged && is_root() {
        c.uid(65534).gid(65534);
    }
    let mut child = c.spawn().expect("util-linux script");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn files(dir: &Path, names: &[&str]) {
    for n in names {
        fs::write(dir.join(n), b"").unwrap();
    }
}

#[test]
fn dash_i_asks_once_for_more_than_three_files() {
    let s = tempfile::tempdir().unwrap();
    files(s.path(), &["a", "b", "c", "d"]);
    let (code, screen) = on_tty(s.path(), "-I a b c d", "n\n", &[]);
    assert_eq!(code, 0);
    assert!(screen.contains("fast-rm: remove 4 arguments?"), "{screen}");
    assert!(s.path().join("a").exists(), "'n' keeps everything");
    let (code, _) = on_tty(s.path(), "-I a b c d", "y\n", &[]);
    assert_eq!(code, 0);
    assert_eq!(fs::read_dir(s.path()).unwrap().count(), 0);
}

#[test]
fn dash_i_asks_for_a_directory_and_not_for_three_files() {
    let s = tempfile::tempdir().unwrap();
    fs::create_dir_all(s.path().join("dir/sub")).unwrap();
    files(s.path(), &["a", "b", "c"]);
    let (_, screen) = on_tty(s.path(), "-I dir", "n\n", &[]);
    assert!(
        screen.contains("remove 1 argument recursively?"),
        "{screen}"
    );
    assert!(s.path().join("dir/sub").exists());
    let (code, screen) = on_tty(s.path(), "-I a b c", "", &[]);
    assert_eq!(code, 0);
    assert!(
        !screen.contains('?'),
        "three files need no prompt: {screen}"
    );
    assert!(!s.path().join("a").exists());
    // -f after -I wins: no prompt.
    let (_, screen) = on_tty(s.path(), "-I -f dir", "", &[]);
    assert!(!screen.contains('?'), "{screen}");
    assert!(!s.path().join("dir").exists());
}

#[test]
fn lower_i_asks_before_each_removal() {
    let s = tempfile::tempdir().unwrap();
    fs::create_dir_all(s.path().join("d/e")).unwrap();
    fs::write(s.path().join("d/f"), b"x").unwrap();
    let (code, screen) = on_tty(s.path(), "-i d", "y\ny\ny\ny\n", &[]);
    assert_eq!(code, 0, "{screen}");
    for q in [
        "fast-rm: descend into directory 'd'?",
        "fast-rm: remove regular file 'd/f'?",
        "fast-rm: remove directory 'd/e'?",
        "fast-rm: remove directory 'd'?",
    ] {
        assert!(screen.contains(q), "{q:?} not asked: {screen}");
    }
    assert!(
        !screen.contains("descend into directory 'd/e'"),
        "an empty directory is not descended into: {screen}"
    );
    assert!(!s.path().join("d").exists());
}

#[test]
fn lower_i_keeps_what_is_declined_and_what_holds_it() {
    let s = tempfile::tempdir().unwrap();
    fs::create_dir_all(s.path().join("d")).unwrap();
    fs::write(s.path().join("d/f"), b"").unwrap();
    // Yes to descending, no to the file: the file and its directory stay,
    // without a question about the directory, without an error.
    let (code, screen) = on_tty(s.path(), "-i d", "y\nn\n", &[]);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("remove regular empty file 'd/f'?"),
        "{screen}"
    );
    assert!(!screen.contains("remove directory"), "{screen}");
    assert!(!screen.contains("cannot"), "{screen}");
    assert!(s.path().join("d/f").exists());
    // No to descending: nothing inside is asked about.
    let (code, screen) = on_tty(s.path(), "-i d", "n\n", &[]);
    assert_eq!(code, 0);
    assert!(!screen.contains("'d/f'"), "{screen}");
    assert!(s.path().join("d/f").exists());
}

#[test]
fn lower_i_reads_answers_from_a_pipe_too() {
    let s = tempfile::tempdir().unwrap();
    symlink("nowhere", s.path().join("link")).unwrap();
    fs::write(s.path().join("keep"), b"").unwrap();
    fs::write(s.path().join("also-kept"), b"").unwrap();
    let mut c = fast_rm();
    c.current_dir(s.path())
        .args(["-i", "link", "keep", "also-kept"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    // Yes, then no, then the end of input (which means no).
    child.stdin.take().unwrap().write_all(b"yes\nno\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("remove symbolic link 'link'?"), "{err}");
    assert!(fs::symlink_metadata(s.path().join("link")).is_err());
    assert!(s.path().join("keep").exists() && s.path().join("also-kept").exists());
}

#[test]
fn write_protected_files_are_asked_about_on_a_terminal_only() {
    if !is_root() {
        // The test needs to run the unprivileged side as `nobody`.
        return;
    }
    let s = tempfile::tempdir().unwrap();
    let t = s.path().join("t");
    let build = || {
        fs::create_dir_all(&t).unwrap();
        fs::write(t.join("ro"), b"").unwrap();
        fs::write(t.join("rw"), b"").unwrap();
        symlink("ro", t.join("link")).unwrap();
        give_away(s.path());
        fs::set_permissions(s.path(), fs::Permissions::from_mode(0o755)).unwrap();
        fs::set_permissions(t.join("ro"), fs::Permissions::from_mode(0o444)).unwrap();
    };
    build();
    let (code, screen) = on_tty_as(s.path(), "t", "n\n", &[], true);
    assert_eq!(code, 0, "{screen}");
    assert!(
        screen.contains("fast-rm: remove write-protected regular empty file 't/ro'?"),
        "{screen}"
    );
    assert_eq!(
        screen.matches('?').count(),
        1,
        "only 'ro' is asked about: {screen}"
    );
    assert!(t.join("ro").exists());
    assert!(!t.join("rw").exists() && fs::symlink_metadata(t.join("link")).is_err());

    let (code, screen) = on_tty_as(s.path(), "t", "y\n", &[], true);
    assert_eq!(code, 0, "{screen}");
    assert!(!t.exists());

    // -f: no question.
    build();
    let (code, screen) = on_tty_as(s.path(), "-f t", "", &[], true);
    assert_eq!(code, 0);
    assert!(!screen.contains('?'), "{screen}");
    assert!(!t.exists());

    // No terminal: no question, as rm.
    build();
    let r = Command::new(fast_rm().get_program())
        .current_dir(s.path())
        .arg("t")
        .stdin(Stdio::null())
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(0));
    assert!(r.stderr.is_empty());
    assert!(!t.exists());

    // Root may write anything: never asked, as rm's access check says.
    build();
    let (code, screen) = on_tty(s.path(), "t", "", &[]);
    assert_eq!(code, 0);
    assert!(!screen.contains('?'), "{screen}");
    assert!(!t.exists());
}

#[test]
fn dash_i_asks_without_a_terminal_and_reads_the_answer_from_a_pipe() {
    // Before: with standard input not a terminal, -I removed without a
    // word, whatever was piped in.
    let s = tempfile::tempdir().unwrap();
    fs::create_dir_all(s.path().join("dir/sub")).unwrap();
    let piped = |args: &[&str], answer: Option<&str>| {
        let mut c = fast_rm();
        c.current_dir(s.path()).args(args).stderr(Stdio::piped());
        if answer.is_some() {
            c.stdin(Stdio::piped());
        }
        let mut child = c.spawn().unwrap();
        if let Some(a) = answer {
            child.stdin.take().unwrap().write_all(a.as_bytes()).unwrap();
        }
        let out = child.wait_with_output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for no in ["n\n", "no\n", "N", "maybe\n", " y\n", "\n"] {
        let (code, err) = piped(&["-I", "-r", "dir"], Some(no));
        assert_eq!(code, Some(0), "{no:?}");
        assert_eq!(err, "fast-rm: remove 1 argument recursively? ", "{no:?}");
        assert!(s.path().join("dir/sub").exists(), "{no:?} keeps it");
    }
    // End of input is no.
    let (code, _) = piped(&["-I", "-r", "dir"], None);
    assert_eq!(code, Some(0));
    assert!(s.path().join("dir/sub").exists());
    let (code, _) = piped(&["-I", "-r", "dir"], Some("yes\n"));
    assert_eq!(code, Some(0));
    assert!(!s.path().join("dir").exists());
}

#[test]
fn progress_is_drawn_on_a_terminal_and_not_elsewhere() {
    let s = tempfile::tempdir().unwrap();
    let now = [("FAST_RM_PROGRESS_DELAY_MS", "0")];
    nested(&s.path().join("t"), 200, 2000);
    let (code, screen) = on_tty(s.path(), "t", "", &now);
    assert_eq!(code, 0);
    assert!(
        screen.contains("files/s"),
        "progress on a terminal: {screen:?}"
    );
    assert!(!s.path().join("t").exists());

    nested(&s.path().join("t"), 200, 2000);
    let (_, screen) = on_tty(s.path(), "--progress=never t", "", &now);
    assert!(!screen.contains("files/s"), "never means never: {screen:?}");

    nested(&s.path().join("t"), 200, 2000);
    let out = fast_rm()
        .current_dir(s.path())
        .env(now[0].0, now[0].1)
        .arg("t")
        .output()
        .unwrap();
    assert!(out.stderr.is_empty(), "auto draws nothing off a terminal");

    nested(&s.path().join("t"), 200, 2000);
    let out = fast_rm()
        .current_dir(s.path())
        .env(now[0].0, now[0].1)
        .args(["--progress=always", "t"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("fast-rm: removed") && err.contains("files/s"),
        "{err:?}"
    );
}

/// `--progress=always` off a terminal ends with the final totals, however
/// short the run, and they are the JSON summary's.
#[test]
fn progress_ends_with_the_final_totals() {
    let s = tempfile::tempdir().unwrap();
    for (delay, dirs, files) in [("0", 200, 5000), ("100000", 3, 10)] {
        nested(&s.path().join("t"), dirs, files);
        let out = fast_rm()
            .current_dir(s.path())
            .env("FAST_RM_PROGRESS_DELAY_MS", delay)
            .args(["--progress=always", "--json", "t"])
            .output()
            .unwrap();
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().last().unwrap_or_default();
        let expect = format!(
            "fast-rm: removed {} files, {} directories, 0 errors in ",
            j["files"], j["dirs"]
        );
        assert!(last.starts_with(&expect), "{err:?}");
        assert!(last.ends_with("files/s), done"), "{err:?}");
        assert!(!s.path().join("t").exists());
    }
}

#[test]
fn a_small_run_draws_no_progress_by_default() {
    let s = tempfile::tempdir().unwrap();
    nested(&s.path().join("t"), 10, 100);
    let (code, screen) = on_tty(s.path(), "t", "", &[]);
    assert_eq!(code, 0);
    assert!(!screen.contains("files/s"), "{screen:?}");
}

/// A question goes out in one write, as GNU rm's does. Written in pieces, an
/// answer typed ahead is echoed by the terminal into the middle of it
/// (`fast-rm: n⏎remove …?`).
#[test]
fn a_question_is_written_whole() {
    if !common::strace_works() {
        return;
    }
    let s = tempfile::tempdir().unwrap();
    files(s.path(), &["f"]);
    let log = s.path().join("trace");
    let mut child = Command::new("strace")
        .current_dir(s.path())
        .args([
            "-qq",
            "-e",
            "trace=write",
            "-e",
            "signal=none",
            "-s",
            "200",
            "-o",
        ])
        .arg(&log)
        .arg(fast_rm().get_program())
        .args(["-i", "f"])
        .stdin(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"n\n").unwrap();
    assert!(child.wait().unwrap().success());
    let trace = fs::read_to_string(&log).unwrap();
    let writes: Vec<&str> = trace
        .lines()
        .filter(|l| l.starts_with("write(2,"))
        .collect();
    assert_eq!(writes.len(), 1, "{trace}");
    assert!(
        writes[0].starts_with("write(2, \"fast-rm: remove regular empty file 'f'? \", 40)"),
        "{trace}"
    );
    assert!(s.path().join("f").exists());
}
