//! Helpers for rush's integration tests: the real binary, run on real
//! scripts, with stdout, stderr and the exit status compared.
#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Whether `program` is on the PATH.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// Runs `c` with `input` on its standard input (written from a thread, so
/// that a large output cannot block the write) and returns its output.
pub fn output_with_input(c: &mut Command, input: &str) -> Output {
    let mut child = c.stdin(Stdio::piped()).spawn().expect("spawn the shell");
    let mut stdin = child.stdin.take().expect("a stdin pipe");
    let input = input.as_bytes().to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().expect("wait for the shell");
    // The shell may leave without reading all of it: a broken pipe is fine.
    let _ = writer.join();
    out
}

/// The binary under test.
/// Writes an executable file for a test to run. The file is written by a
/// child process: this test process never holds it open for writing, so
/// a child that another test thread forks at that moment cannot inherit
/// the descriptor and make the file's exec fail with "Text file busy".
pub fn write_executable(path: &std::path::Path, text: &str) {
    let mut c = Command::new("sh");
    c.args(["-c", "cat > \"$1\" && chmod 755 \"$1\"", "sh"])
        .arg(path);
    let out = output_with_input(&mut c, text);
    assert!(out.status.success(), "writing {}", path.display());
}

pub fn rush() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rush"));
    c.env_remove("RUSH_PERF");
    with_default_signals(&mut c);
    c
}

/// `bash`, as the comparisons run it: with the signals at their defaults,
/// as rush is (see [`with_default_signals`]).
pub fn bash() -> Command {
    let mut c = Command::new("bash");
    with_default_signals(&mut c);
    c
}

/// The signals a test runner may have been started with ignored: SIGHUP
/// under `nohup`, SIGINT and SIGQUIT as a background job of a shell
/// without job control. A shell lists a signal ignored at its start in
/// `trap -p` and cannot trap it, so the shells under test start with
/// these at their defaults, whatever the runner's.
pub fn with_default_signals(c: &mut Command) -> &mut Command {
    for sig in [libc::SIGHUP, libc::SIGINT, libc::SIGQUIT] {
        with_signal(c, sig, libc::SIG_DFL);
    }
    c
}

/// Starts the child with `sig` set to `how` (`SIG_DFL`, `SIG_IGN`).
pub fn with_signal(c: &mut Command, sig: libc::c_int, how: libc::sighandler_t) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: signal() is async-signal-safe, the only call made between
    // fork and exec here.
    unsafe {
        c.pre_exec(move || {
            libc::signal(sig, how);
            Ok(())
        })
    }
}

/// A finished run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Self {
        use std::os::unix::process::ExitStatusExt;
        Run {
            status: o
                .status
                .code()
                .unwrap_or_else(|| 128 + o.status.signal().unwrap_or(0)),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// Runs `script` fed on stdin (the mode the Oils runner uses).
pub fn stdin(script: &str) -> Run {
    stdin_in(script, None)
}

/// `stdin`, in the directory `dir`.
pub fn stdin_in(script: &str, dir: Option<&std::path::Path>) -> Run {
    let mut c = rush();
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(d) = dir {
        c.current_dir(d);
    }
    let mut child = c.spawn().expect("spawn rush");
    let mut input = child.stdin.take().unwrap();
    let text = script.as_bytes().to_vec();
    let writer = std::thread::spawn(move || {
        let _ = input.write_all(&text);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out.into()
}

/// Runs `rush -c script args...`.
pub fn dash_c(script: &str, args: &[&str]) -> Run {
    rush()
        .arg("-c")
        .arg(script)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run rush")
        .into()
}

/// Asserts that `script` on stdin prints `stdout` and exits with `status`.
#[track_caller]
pub fn check(script: &str, stdout: &str, status: i32) {
    let r = stdin(script);
    assert_eq!(
        (r.stdout.as_str(), r.status),
        (stdout, status),
        "script:\n{script}\nstderr:\n{}",
        r.stderr
    );
}

/// `check` for a table of (script, stdout) that all exit 0.
#[track_caller]
pub fn table(cases: &[(&str, &str)]) {
    for (script, out) in cases {
        check(script, out, 0);
    }
}

/// Runs `shell flags... -c script sh args...` in `dir` (if given).
fn run_shell(
    shell: &mut Command,
    dir: Option<&std::path::Path>,
    flags: &[&str],
    script: &str,
    args: &[&str],
) -> std::io::Result<Run> {
    shell.args(flags).arg("-c").arg(script).arg("sh").args(args);
    if let Some(d) = dir {
        shell.current_dir(d);
    }
    Ok(shell.stdin(Stdio::null()).output()?.into())
}

/// Runs `script` with rush (in `dir`, with `flags` before `-c`, and `args`
/// as `$1`…) and, when bash is installed, with bash too; asserts that rush
/// prints `stdout` and exits with `status`, and that bash agrees (so the
/// expectation is bash's).
#[track_caller]
fn compare(
    dir: Option<&std::path::Path>,
    flags: &[&str],
    script: &str,
    args: &[&str],
    stdout: &str,
    status: i32,
) {
    let r = run_shell(&mut rush(), dir, flags, script, args).expect("run rush");
    assert_eq!(
        (r.stdout.as_str(), r.status),
        (stdout, status),
        "rush {flags:?} -c {script:?} {args:?}\nstderr:\n{}",
        r.stderr
    );
    if let Ok(b) = run_shell(&mut bash(), dir, flags, script, args) {
        assert_eq!(
            (b.stdout.as_str(), b.status),
            (stdout, status),
            "bash disagrees with the expectation for {script:?} {args:?}"
        );
    }
}

/// [`compare`] with rush and bash as `-c script sh args...`.
#[track_caller]
pub fn like_bash(script: &str, args: &[&str], stdout: &str, status: i32) {
    compare(None, &[], script, args, stdout, status);
}

/// [`like_bash`] in the folder `dir`, with `flags` before `-c`.
#[track_caller]
pub fn like_bash_in(
    dir: &std::path::Path,
    flags: &[&str],
    script: &str,
    stdout: &str,
    status: i32,
) {
    compare(Some(dir), flags, script, &[], stdout, status);
}
