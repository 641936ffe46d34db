//! The PTY with real child processes.

mod common;

use termio::pty::{Command, Pty, Size};

/// Everything the child writes, read to the end.
fn output(p: &Pty) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        match p.read(&mut buf).unwrap() {
            0 => return out,
            n => out.extend_from_slice(&buf[..n]),
        }
    }
}

fn sh(script: &str) -> Command {
    Command::new("/bin/sh").arg("-c").arg(script)
}

/// The child runs in a new session, as its leader, with the PTY as its
/// controlling terminal, at the size asked; its output and exit code come
/// back.
#[test]
fn a_command_runs_in_its_own_session_on_the_pty() {
    let mut cmd = sh("stty size; tty >/dev/null && echo tty; \
                      ps -o sid= -o pgid= -p $$; echo pid $$; exit 7");
    cmd.size = Size::chars(120, 40);
    let mut p = Pty::spawn(&cmd).unwrap();
    let text = String::from_utf8(output(&p)).unwrap();
    let status = p.wait().unwrap();
    assert_eq!(status.code(), Some(7));
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    assert_eq!(lines[0], "40 120", "{text:?}");
    assert_eq!(lines[1], "tty");
    let pid = p.pid().to_string();
    let ids: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!(ids, [pid.as_str(), pid.as_str()], "sid and pgid: {text:?}");
    assert_eq!(lines[3], format!("pid {pid}"));
}

/// Output written right before the child exits is all read: 64 KiB, then
/// exit at once (node-pty loses this: its issue #726).
#[test]
fn output_written_just_before_exit_is_all_read() {
    for _ in 0..5 {
        let mut p = Pty::spawn(&sh("head -c 65536 /dev/zero | tr '\\0' x; exit 3")).unwrap();
        let out = output(&p);
        assert_eq!(p.wait().unwrap().code(), Some(3));
        assert_eq!(out.len(), 65536);
        assert!(out.iter().all(|&b| b == b'x'));
    }
}

/// 64 MiB of random bytes through `cat` on a raw terminal come back
/// exact, written and read at once.
#[test]
fn random_bytes_through_cat_come_back_exact() {
    const LEN: usize = 64 << 20;
    let mut data = vec![0u8; LEN];
    fastrand::Rng::with_seed(42).fill(&mut data);
    let mut cmd = Command::new("cat");
    cmd.raw = true;
    let mut p = Pty::spawn(&cmd).unwrap();
    std::thread::scope(|s| {
        let (p, data) = (&p, &data);
        s.spawn(move || {
            for chunk in data.chunks(1 << 16) {
                p.write_all(chunk).unwrap();
            }
        });
        let (mut got, mut buf) = (0, vec![0u8; 1 << 16]);
        while got < LEN {
            let n = p.read(&mut buf).unwrap();
            assert!(n > 0, "the end after {got} bytes");
            if buf[..n] != data[got..got + n] {
                // Stop the writer too, or the scope waits for it forever.
                let _ = p.signal_group(rustix::process::Signal::KILL);
                panic!("bytes differ after {got}");
            }
            got += n;
        }
    });
    p.signal_group(rustix::process::Signal::HUP).unwrap();
    assert!(!p.wait().unwrap().success());
}

/// A signal to the group reaches the child's children too; the child is
/// reaped.
#[test]
fn a_signal_reaches_the_whole_group() {
    let mut p = Pty::spawn(&sh("sleep 1000 & echo $!; wait")).unwrap();
    let mut first = [0u8; 64];
    let n = p.read(&mut first).unwrap();
    let grandchild: i32 = std::str::from_utf8(&first[..n])
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The grandchild is gone once its pidfd says so.
    let watched = common::Watched::new(grandchild);
    p.signal_group(rustix::process::Signal::TERM).unwrap();
    assert!(!p.wait().unwrap().success());
    assert!(watched.exits_within(std::time::Duration::from_secs(10)));
}

/// node-pty's options at the PTY: the size in pixels reaches the child's
/// `TIOCGWINSZ`, `clear_env` gives it only the variables asked, and `uid`
/// and `gid` run it as that user (here, as root, `nobody`).
#[test]
fn pixels_environment_and_user_reach_the_child() {
    let mut cmd = sh("python3 -c 'import fcntl,struct,termios; \
         print(struct.unpack(\"HHHH\", fcntl.ioctl(0, termios.TIOCGWINSZ, bytes(8))))'; \
         env | sort; id -u; id -g");
    cmd.size = Size {
        width: 1200,
        height: 800,
        ..Size::chars(120, 40)
    };
    cmd.clear_env = true;
    cmd.env = vec![
        ("ONLY".into(), "this".into()),
        ("PATH".into(), "/usr/bin:/bin".into()),
    ];
    let root = rustix::process::geteuid().is_root();
    if root {
        cmd.uid = Some(65534);
        cmd.gid = Some(65534);
    }
    let mut p = Pty::spawn(&cmd).unwrap();
    let text = String::from_utf8(output(&p)).unwrap();
    assert!(p.wait().unwrap().success(), "{text}");
    let lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    assert_eq!(lines[0], "(40, 120, 1200, 800)");
    // What sh and env add themselves (PWD, SHLVL, _) aside, only ours.
    let vars: Vec<&str> = lines[1..lines.len() - 2]
        .iter()
        .copied()
        .filter(|l| !l.starts_with("PWD=") && !l.starts_with("SHLVL=") && !l.starts_with("_="))
        .collect();
    assert_eq!(vars, ["ONLY=this", "PATH=/usr/bin:/bin"]);
    if root {
        assert_eq!(lines[lines.len() - 2..], ["65534", "65534"]);
    }
}

/// With `start_errors_exit` (node-pty's way), a program that is not there
/// and a folder that cannot be entered are the child's to report: it says
/// why on the terminal and exits with code 1. Without, `spawn` fails.
#[test]
fn a_start_that_fails_is_the_childs_exit_with_node_ptys_words() {
    let cases = [
        (
            Command::new("/no/such/program"),
            "execvp(3) failed.: No such file or directory",
        ),
        (
            Command::new("no-such-program-on-the-path"),
            "execvp(3) failed.: No such file or directory",
        ),
        (
            Command {
                cwd: Some("/no/such/folder".into()),
                ..Command::new("/bin/echo")
            },
            "chdir(2) failed.: No such file or directory",
        ),
    ];
    for (mut cmd, words) in cases {
        assert!(Pty::spawn(&cmd).is_err(), "{cmd:?}");
        cmd.start_errors_exit = true;
        let mut p = Pty::spawn(&cmd).unwrap();
        let text = String::from_utf8(output(&p)).unwrap();
        assert_eq!(text, format!("{words}\r\n"));
        assert_eq!(p.wait().unwrap().code(), Some(1));
    }
    // A program that can start still starts, from its folder.
    let mut cmd = sh("pwd");
    cmd.cwd = Some("/tmp".into());
    cmd.start_errors_exit = true;
    let mut p = Pty::spawn(&cmd).unwrap();
    assert_eq!(String::from_utf8(output(&p)).unwrap(), "/tmp\r\n");
    assert!(p.wait().unwrap().success());
}
