//! Running things: modes, exit statuses, errexit, traps, and how commands
//! are started (no polling, exec for the last command of -c).

mod common;
use common::{check, dash_c, rush, stdin, table};
use std::process::Stdio;

#[test]
fn exit_statuses_126_127_and_signals() {
    let r = stdin("nonexistent-command-xyz; echo $?\n");
    assert_eq!(r.stdout, "127\n");
    assert!(
        r.stderr
            .contains(": line 1: nonexistent-command-xyz: command not found"),
        "{}",
        r.stderr
    );
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("noexec"), "echo hi\n").unwrap();
    let r = common::stdin_in("./noexec; echo $?\n", Some(d.path()));
    assert_eq!(r.stdout, "126\n", "{}", r.stderr);
    table(&[
        ("sh -c 'kill -TERM $$'; echo $?\n", "143\n"),
        ("/ 2>/dev/null; echo $?\n", "126\n"),
    ]);
}

#[test]
fn prefix_path_assignment_finds_the_command() {
    let d = tempfile::tempdir().unwrap();
    let bin = d.path().join("bin");
    std::fs::create_dir_all(bin.join("sub")).unwrap();
    std::fs::create_dir_all(d.path().join("dir/hello")).unwrap();
    common::write_executable(&bin.join("hello"), "#!/bin/sh\necho hi\n");
    let script = format!(
        "PATH={dir}:{bin}:$PATH hello; echo $?; hello 2>/dev/null; echo $?\n",
        dir = d.path().join("dir").display(),
        bin = bin.display()
    );
    let r = stdin(&script);
    assert_eq!(r.stdout, "hi\n0\n127\n", "{}", r.stderr);
}

#[test]
fn a_script_without_a_shebang_runs_in_rush() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("plain");
    common::write_executable(&f, "echo plain $1\n");
    let r = common::stdin_in("./plain arg\n", Some(d.path()));
    assert_eq!(r.stdout, "plain arg\n", "{}", r.stderr);
}

#[test]
fn errexit_follows_posix() {
    check("set -e; false; echo no\n", "", 1);
    table(&[
        ("set -e; false || echo rescued\n", "rescued\n"),
        ("set -e; if false; then :; fi; echo cond\n", "cond\n"),
        ("set -e; ! true; echo bang\n", "bang\n"),
        (
            "set -e; f() { false; echo in-f; }; f || echo f-failed\n",
            "in-f\n",
        ),
        ("set -e; while false; do :; done; echo loop\n", "loop\n"),
        ("set -e; false && true; echo and-list\n", "and-list\n"),
    ]);
    check("set -e; (false); echo no\n", "", 1);
    check("set -e; { false; }; echo no\n", "", 1);
}

#[test]
fn traps_on_exit_and_signals() {
    table(&[
        (
            "trap 'echo got USR1' USR1; kill -USR1 $$; echo after\n",
            "got USR1\nafter\n",
        ),
        ("trap 'echo int' INT; trap - INT; trap | wc -l\n", "0\n"),
        ("trap 'echo t' TERM; trap\n", "trap -- 'echo t' SIGTERM\n"),
        (
            "trap '' HUP; sh -c 'kill -HUP $$; echo survived'\n",
            "survived\n",
        ),
    ]);
    check("trap 'echo exit trap' EXIT; exit 3\n", "exit trap\n", 3);
    // A trap set on the same line keeps the shell alive past its last
    // command (no exec), so the trap still runs.
    let r = dash_c("trap 'echo on exit' EXIT; /bin/true", &[]);
    assert_eq!(r.stdout, "on exit\n");
    // bash's ERR: after a failure outside conditions, before set -e acts.
    check(
        "trap 'echo err $?' ERR; false; if false; then :; fi; false || true; set -e; (exit 3); echo no\n",
        "err 1\nerr 3\n",
        3,
    );
    let r = stdin("trap 'echo status $?' EXIT; false\n");
    assert_eq!((r.stdout.as_str(), r.status), ("status 1\n", 1));
    // `wait` returns early for a trapped signal: 128 + its number.
    check(
        "trap 'echo trapped' USR1; sleep 5 & p=$!; (sleep 0.1; kill -USR1 $$) & wait $p; echo $?; kill $p\n",
        "trapped\n138\n",
        0,
    );
}

#[test]
fn options_e_u_x_v_f_n_c_a() {
    let r = stdin("set -x; echo traced 'a b'\n");
    assert_eq!(r.stdout, "traced a b\n");
    assert!(r.stderr.contains("+ echo traced 'a b'"), "{}", r.stderr);
    let r = stdin("set -v\necho verbose\n");
    assert!(r.stderr.contains("echo verbose"), "{}", r.stderr);
    check("set -n\necho not-run\n", "", 0);
    check("set -a; A=1; sh -c 'echo $A'\n", "1\n", 0);
    check("set -o noglob; echo /*\n", "/*\n", 0);
    check("set -o errexit; false; echo no\n", "", 1);
    check("set -u; echo ${unset_var:-ok}\n", "ok\n", 0);
    let r = rush()
        .args(["-e", "-c", "false; echo no"])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
    let r = rush()
        .args(["-o", "pipefail", "-c", "false | true"])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
    check("set -o | grep -c pipefail\n", "1\n", 0);
    let r: common::Run = rush()
        .args(["-eu", "-c", "echo $-"])
        .output()
        .unwrap()
        .into();
    assert_eq!(r.stdout, "ehuBc\n");
}

#[test]
fn modes_c_file_stdin_and_s() {
    let r = dash_c("echo $0 $1", &["zero", "one"]);
    assert_eq!(r.stdout, "zero one\n");
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("script.sh");
    std::fs::write(&f, "echo script $0 $# $1\n").unwrap();
    let r: common::Run = rush().arg(&f).arg("x").output().unwrap().into();
    assert_eq!(r.stdout, format!("script {} 1 x\n", f.display()));
    let r: common::Run = rush().arg("/nonexistent/script").output().unwrap().into();
    assert_eq!(r.status, 127);
    let mut c = rush();
    c.args(["-s", "a", "b"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = c.spawn().unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"echo $# $2\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "2 b\n");
}

#[test]
fn stdin_is_read_a_command_at_a_time() {
    // `read` sees the line after the current command, even on a pipe.
    check(
        "read x\nline for read\necho got: $x\n",
        "got: line for read\n",
        0,
    );
    // On a file, the shell leaves the offset just past the command, so a
    // child that reads (and seeks back, as head does) sees the rest too.
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("script");
    std::fs::write(&f, "head -n 1\nline for head\necho after\n").unwrap();
    let out = rush()
        .stdin(std::fs::File::open(&f).unwrap())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "line for head\nafter\n"
    );
}

#[test]
fn works_without_home_and_prints_no_prompt() {
    let r: common::Run = rush()
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .arg("-c")
        .arg("echo ${HOME-unset}; cd 2>&1; echo $?")
        .output()
        .unwrap()
        .into();
    assert_eq!(
        r.stdout,
        format!(
            "unset\n{}: line 1: cd: HOME not set\n1\n",
            env!("CARGO_BIN_EXE_rush")
        )
    );
    let r = stdin("echo only-this\n");
    assert_eq!(r.stderr, "");
}

#[test]
fn perf_phases_are_reported_on_request() {
    let r: common::Run = rush()
        .env("RUSH_PERF", "1")
        .args(["-c", "x=$(echo a); /bin/true; echo $x"])
        .output()
        .unwrap()
        .into();
    assert_eq!(r.stdout, "a\n");
    for phase in ["parse", "expand", "spawn", "wait"] {
        assert!(
            r.stderr.contains(&format!("rush perf: {phase}")),
            "{}",
            r.stderr
        );
    }
}

/// Whether strace may trace (a container can forbid ptrace); a missing
/// strace fails the test.
fn strace() -> bool {
    assert!(
        common::on_path("strace"),
        "strace is not installed: apt-get install strace"
    );
    std::process::Command::new("strace")
        .args(["-f", "-o", "/dev/null", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `rush -c script` under `strace -f -e trace=SYSCALLS` and returns the
/// trace, or `None` (with a note) where strace cannot run.
fn traced(syscalls: &str, script: &str) -> Option<String> {
    if !strace() {
        eprintln!("strace may not trace here (ptrace is forbidden): skipped");
        return None;
    }
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("trace");
    let status = std::process::Command::new("strace")
        .args(["-f", "-qq", "-e", &format!("trace={syscalls}"), "-o"])
        .arg(&log)
        .arg(env!("CARGO_BIN_EXE_rush"))
        .args(["-c", script])
        .status()
        .unwrap();
    assert!(status.success(), "{script}");
    Some(std::fs::read_to_string(&log).unwrap())
}

#[test]
fn dash_c_execs_the_last_command_without_forking() {
    let Some(trace) = traced("execve,clone,clone3,fork,vfork", "/bin/true") else {
        return;
    };
    let execs = trace.lines().filter(|l| l.contains("execve(")).count();
    assert_eq!(execs, 2, "rush itself, then /bin/true:\n{trace}");
    // Match system calls, not paths (a checkout may live in `ci-clone/`).
    let forks = ["clone(", "clone3(", "fork(", "vfork("];
    assert!(
        !trace.lines().any(|l| forks.iter().any(|f| l.contains(f))),
        "{trace}"
    );
}

#[test]
fn waiting_never_sleeps() {
    let Some(trace) = traced(
        "nanosleep,clock_nanosleep,wait4",
        "sleep 0.2; x=$(sleep 0.1; echo y); sleep 0.1 | cat; wait",
    ) else {
        return;
    };
    // The sleeps belong to the sleep processes; the shell (and its forked
    // subshells: every process that calls wait4) only waits. The first line
    // may be a sleep's, so the shell is found by its wait4 calls.
    let pid = |l: &str| l.split_whitespace().next().unwrap_or_default().to_string();
    let shells: Vec<String> = trace
        .lines()
        .filter(|l| l.contains("wait4"))
        .map(pid)
        .collect();
    for line in trace.lines().filter(|l| shells.contains(&pid(l))) {
        assert!(!line.contains("nanosleep"), "the shell slept: {line}");
    }
    assert!(trace.contains("wait4"), "{trace}");
}

#[test]
fn builtin_command_substitution_forks_nothing() {
    let Some(trace) = traced(
        "clone,clone3,fork,vfork",
        "x=$(pwd); y=$(echo a b); z=$(printf %s c); echo \"$x$y$z\" >/dev/null",
    ) else {
        return;
    };
    assert!(trace.trim().is_empty(), "{trace}");
}

#[test]
fn test_brackets_read_no_directory() {
    let Some(trace) = traced("getdents64", "i=0; while [ $i -lt 3 ]; do i=$((i+1)); done") else {
        return;
    };
    // `[` alone is not a glob pattern: no directory is listed for it.
    assert!(trace.trim().is_empty(), "{trace}");
}
