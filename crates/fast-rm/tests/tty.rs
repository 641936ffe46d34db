//! What happens on a terminal: the -I prompt and the progress display, under
//! a real pseudo-terminal (util-linux `script`).

mod common;

use common::{fast_rm, nested, rm};
use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs fast-rm with `args` on a pseudo-terminal in `dir`, typing `input`.
fn on_tty(dir: &Path, args: &str, input: &str, env: &[(&str, &str)]) -> (i32, String) {
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
fn dash_i_does_not_prompt_without_a_terminal() {
    let s = tempfile::tempdir().unwrap();
    files(s.path(), &["a", "b", "c", "d"]);
    let r = rm(s.path(), &["-I", "a", "b", "c", "d"]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert_eq!(fs::read_dir(s.path()).unwrap().count(), 0);
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

#[test]
fn a_small_run_draws_no_progress_by_default() {
    let s = tempfile::tempdir().unwrap();
    nested(&s.path().join("t"), 10, 100);
    let (code, screen) = on_tty(s.path(), "t", "", &[]);
    assert_eq!(code, 0);
    assert!(!screen.contains("files/s"), "{screen:?}");
}
