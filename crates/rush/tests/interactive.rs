//! The interactive shell, driven through a real PTY as a person would:
//! keys in, the terminal's bytes out. bash (and zsh, where it behaves the
//! same) run the same keys beside rush, and their results are compared.
//!
//! The harness waits on the kernel: a thread blocks reading the PTY and
//! hands chunks over a channel, which `expect` waits on with a timeout.

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Rush,
    Bash,
    Zsh,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Rush => "rush",
            Kind::Bash => "bash",
            Kind::Zsh => "zsh",
        }
    }

    /// The shells to compare: rush and `others`, which must be installed.
    fn with(others: &[Kind]) -> Vec<Kind> {
        let mut v = vec![Kind::Rush];
        for &k in others {
            let name = k.name();
            assert!(
                which(name),
                "{name} is not installed: apt-get install {name}"
            );
            v.push(k);
        }
        v
    }
}

fn which(prog: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(prog).is_file()))
}

/// A shell in a PTY.
struct Term {
    kind: Kind,
    writer: Box<dyn Write + Send>,
    rx: mpsc::Receiver<Vec<u8>>,
    /// Output not yet consumed by `expect`.
    pending: Vec<u8>,
    /// Everything the shell wrote, for the screen model and messages.
    all: Vec<u8>,
    child: Box<dyn Child + Send + Sync>,
    /// Kept open while the shell runs (closing it hangs the terminal up).
    _master: Box<dyn MasterPty + Send>,
    cols: u16,
}

impl Term {
    /// Starts `kind` with no start-up files, PS1 `PROMPT> `, HOME (and the
    /// history file) in `home`, in `dir`.
    fn start(kind: Kind, home: &Path, dir: &Path, cols: u16, env: &[(&str, &str)]) -> Term {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 30,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("openpty");
        let mut cmd = match kind {
            Kind::Rush => {
                let mut c = CommandBuilder::new(env!("CARGO_BIN_EXE_rush"));
                c.args(["--norc", "-i"]);
                c
            }
            Kind::Bash => {
                let mut c = CommandBuilder::new("bash");
                c.args(["--norc", "--noprofile", "-i"]);
                c
            }
            Kind::Zsh => {
                let mut c = CommandBuilder::new("zsh");
                c.args(["-f", "-i"]);
                c
            }
        };
        cmd.env_clear();
        cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default());
        cmd.env("HOME", home);
        cmd.env("TERM", "xterm");
        cmd.env("LANG", "C.UTF-8");
        cmd.env("PS1", "PROMPT> ");
        cmd.env("PS2", "MORE> ");
        cmd.env("HISTFILE", home.join("history"));
        cmd.env("INPUTRC", "/dev/null");
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.cwd(dir);
        let child = pair.slave.spawn_command(cmd).expect("spawn shell");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("reader");
        let writer = pair.master.take_writer().expect("writer");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => {
                        if tx.send(buf[..n].to_vec()).is_err() {
                            return;
                        }
                    }
                }
            }
        });
        let mut t = Term {
            kind,
            writer,
            rx,
            pending: Vec::new(),
            all: Vec::new(),
            child,
            _master: pair.master,
            cols,
        };
        t.expect("PROMPT> ");
        // zsh: no `%` mark for a line without a newline, and emacs keys.
        if kind == Kind::Zsh {
            t.line("unsetopt prompt_sp; bindkey -e; print -r zsh$((1+1))ready");
            t.expect("zsh2ready");
            t.expect("PROMPT> ");
        }
        t
    }

    fn send(&mut self, keys: &str) {
        self.writer
            .write_all(keys.as_bytes())
            .expect("write to pty");
        self.writer.flush().expect("flush pty");
    }

    /// Types a line and Enter.
    fn line(&mut self, text: &str) {
        self.send(text);
        self.send("\r");
    }

    /// Waits up to `wait` for `needle` in the output; what came before
    /// it (consumed with it), or `None` if it did not come.
    fn wait_for(&mut self, needle: &[u8], wait: Duration) -> Option<String> {
        let deadline = Instant::now() + wait;
        loop {
            if let Some(at) = find(&self.pending, needle) {
                let before = String::from_utf8_lossy(&self.pending[..at]).into_owned();
                self.pending.drain(..at + needle.len());
                return Some(before);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let chunk = self.rx.recv_timeout(left).ok()?;
            self.all.extend_from_slice(&chunk);
            self.pending.extend_from_slice(&chunk);
        }
    }

    /// Waits for `needle` in the output; returns what came before it.
    fn expect(&mut self, needle: &str) -> String {
        self.wait_for(needle.as_bytes(), TIMEOUT)
            .unwrap_or_else(|| {
                panic!(
                    "{}: {needle:?} not seen in {TIMEOUT:?}; output so far:\n{}",
                    self.kind.name(),
                    String::from_utf8_lossy(&self.all)
                )
            })
    }

    /// Runs `cmd` and returns its output: the text between the echo of
    /// Enter and `end`, a marker the command prints last.
    fn run(&mut self, cmd: &str, end: &str) -> String {
        self.line(cmd);
        let out = self.expect(end);
        self.expect("PROMPT> ");
        let out = strip_csi(&out).replace('\r', "");
        // The first line is the command as the editor echoed it.
        out.split_once('\n')
            .map(|x| x.1.to_string())
            .unwrap_or_default()
    }

    /// Ctrl-C, repeated each second until a prompt shows.
    fn interrupt_until_prompt(&mut self) {
        for _ in 0..10 {
            self.send("\x03");
            if self.wait_for(b"PROMPT> ", Duration::from_secs(1)).is_some() {
                return;
            }
        }
        panic!(
            "{}: no prompt after Ctrl-C:\n{}",
            self.kind.name(),
            String::from_utf8_lossy(&self.all)
        );
    }

    /// The rows of the screen, as a terminal of this size shows what was
    /// written.
    fn screen(&self) -> Vec<String> {
        let nz = |n: u16| std::num::NonZero::new(n).expect("a size");
        let mut p = vt100::Parser::new(nz(30), nz(self.cols), 0);
        p.process(&self.all);
        p.screen().rows(0, self.cols).collect()
    }
}

impl Drop for Term {
    /// A hang-up, as when a terminal window closes: the shell passes it on
    /// to its jobs and leaves. If it has not left in 5 s, it is killed.
    fn drop(&mut self) {
        let Some(pid) = self.child.process_id() else {
            return;
        };
        let pid = pid as libc::pid_t;
        // SAFETY: signalling our own child.
        unsafe { libc::kill(pid, libc::SIGHUP) };
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let watchdog = std::thread::spawn(move || {
            if done_rx.recv_timeout(Duration::from_secs(5)).is_err() {
                let status =
                    std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
                let wchan =
                    std::fs::read_to_string(format!("/proc/{pid}/wchan")).unwrap_or_default();
                let sig: Vec<&str> = status
                    .lines()
                    .filter(|l| {
                        l.starts_with("Sig") || l.starts_with("Shd") || l.starts_with("State")
                    })
                    .collect();
                eprintln!("warning: shell {pid} still running 5 s after SIGHUP: {wchan} {sig:?}");
                // SAFETY: signalling our own child, not yet reaped.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        });
        let t0 = Instant::now();
        let _ = self.child.wait();
        let _ = done_tx.send(());
        let _ = watchdog.join();
        if t0.elapsed() > Duration::from_secs(2) {
            eprintln!(
                "warning: {} took {:?} to leave after SIGHUP; output:\n{}",
                self.kind.name(),
                t0.elapsed(),
                String::from_utf8_lossy(&self.all)
            );
        }
    }
}

/// The text without its CSI escape sequences (`ESC [ … final`).
fn strip_csi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            chars.next();
            for d in chars.by_ref() {
                if ('@'..='~').contains(&d) {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A fresh home and working directory.
fn dirs() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    let work = t.path().join("work");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    (t, home, work)
}

#[test]
fn typing_and_editing() {
    let (_t, home, work) = dirs();
    for kind in Kind::with(&[Kind::Bash, Kind::Zsh]) {
        let mut t = Term::start(kind, &home, &work, 80, &[]);
        // Type with a typo, go to the start (Ctrl-A), forward (Ctrl-F), fix
        // it, end of line (Ctrl-E), more text, delete a word back (Ctrl-W),
        // Enter.
        t.send("echo wrld");
        t.send("\x01");
        t.send(&"\x06".repeat(6));
        t.send("o");
        t.send("\x05 extra junk");
        t.send("\x17");
        t.send("x$((6*7))");
        t.send("\r");
        let out = t.expect("42");
        assert!(out.ends_with("world extra x"), "{}: {out:?}", kind.name());
        t.expect("PROMPT> ");
    }
}

#[test]
fn keys_typed_ahead_are_kept() {
    let (_t, home, work) = dirs();
    for kind in Kind::with(&[Kind::Bash, Kind::Zsh]) {
        let mut t = Term::start(kind, &home, &work, 80, &[]);
        // The second line arrives while the first still runs.
        t.send("sleep 0.3\recho ahead$((2*3))\r");
        t.expect("ahead6");
        t.expect("PROMPT> ");
    }
}

#[test]
fn multi_line_for_loop_is_one_history_entry() {
    for kind in Kind::with(&[Kind::Bash]) {
        // Each shell its own history file.
        let (_t, home, work) = dirs();
        let mut t = Term::start(kind, &home, &work, 80, &[]);
        t.line("for i in 1 2 3");
        t.expect("MORE> ");
        t.line("do echo n$((i*10))");
        t.expect("MORE> ");
        t.line("done");
        t.expect("n10");
        t.expect("n20");
        t.expect("n30");
        t.expect("PROMPT> ");
        let out = t.run("history; echo end$((1))", "end1");
        assert!(
            out.contains("    2  history; echo end$((1))"),
            "{}: {out:?}",
            kind.name()
        );
        // Up brings the whole loop back; Enter runs it again.
        t.send("\x1b[A\x1b[A\r");
        t.expect("n10");
        t.expect("n30");
        t.expect("PROMPT> ");
    }
}

#[test]
fn history_of_two_concurrent_shells_keeps_both() {
    let (_t, home, work) = dirs();
    let mut a = Term::start(Kind::Rush, &home, &work, 80, &[]);
    let mut b = Term::start(Kind::Rush, &home, &work, 80, &[]);
    a.run("echo from-a-$((1))", "from-a-1");
    b.run("echo from-b-$((2))", "from-b-2");
    a.run("echo again-a-$((3))", "again-a-3");
    a.line("exit");
    b.line("exit");
    assert!(a.child.wait().unwrap().success());
    assert!(b.child.wait().unwrap().success());
    let mut c = Term::start(Kind::Rush, &home, &work, 80, &[]);
    let out = c.run("history; echo end$((1))", "end1");
    for want in [
        "echo from-a-$((1))",
        "echo from-b-$((2))",
        "echo again-a-$((3))",
    ] {
        assert!(out.contains(want), "{want} missing from:\n{out}");
    }
    // `!` expansion runs an earlier command again.
    c.line("!?from-b");
    c.expect("from-b-2");
}

#[test]
fn ctrl_c_at_the_prompt_and_in_a_pipeline() {
    let (_t, home, work) = dirs();
    for kind in Kind::with(&[Kind::Bash, Kind::Zsh]) {
        let mut t = Term::start(kind, &home, &work, 80, &[]);
        // At the prompt: the line is dropped, $? is 130 (zsh: 1).
        t.send("echo never-$((1))");
        t.expect("never-$((1))");
        if kind == Kind::Rush {
            t.send("\x03");
            t.expect("PROMPT> ");
        } else {
            // bash, on a loaded machine, sometimes draws no prompt after
            // the first Ctrl-C.
            t.interrupt_until_prompt();
        }
        let out = t.run("echo st$?", "\n");
        assert!(
            !t.all.windows(7).any(|w| w == b"never-1"),
            "{}",
            kind.name()
        );
        let _ = out;
        // In a running pipeline: both ends die, the prompt comes back.
        t.line("(echo go$((6*7)); exec sleep 100) | cat");
        t.expect("go42");
        let t0 = Instant::now();
        t.send("\x03");
        t.expect("PROMPT> ");
        assert!(t0.elapsed() < Duration::from_secs(5), "{}", kind.name());
        let out = t.run("echo st=$?. end$((1))", "end1");
        assert!(out.ends_with("st=130. "), "{}: {out:?}", kind.name());
        // A loop the shell runs itself stops too. (Not compared: bash
        // goes on with the loop when the Ctrl-C reaches it between two
        // commands, and on a loaded machine sometimes leaves.)
        if kind == Kind::Rush {
            t.line("while :; do echo tick$((1)); sleep 1; done");
            t.expect("tick1");
            t.send("\x03");
            t.expect("PROMPT> ");
            t.run("echo alive$((2+3))", "alive5");
        }
    }
}

#[test]
fn ctrl_z_then_bg_and_fg() {
    let (_t, home, work) = dirs();
    for kind in Kind::with(&[Kind::Bash]) {
        let mut t = Term::start(kind, &home, &work, 80, &[]);
        t.line("sh -c 'echo go$((6*7)); exec sleep 100'");
        t.expect("go42");
        t.send("\x1a");
        let out = t.expect("PROMPT> ");
        assert!(out.contains("[1]+  Stopped"), "{}: {out:?}", kind.name());
        let out = t.run("jobs; echo end$((1))", "end1");
        assert!(
            out.contains("[1]+  Stopped                 sh -c 'echo go$((6*7)); exec sleep 100'"),
            "{}: {out:?}",
            kind.name()
        );
        let out = t.run("bg; echo end$((2))", "end2");
        assert!(
            out.contains("[1]+ sh -c 'echo go$((6*7)); exec sleep 100' &"),
            "{}: {out:?}",
            kind.name()
        );
        let out = t.run("jobs; echo end$((3))", "end3");
        assert!(out.contains("[1]+  Running"), "{}: {out:?}", kind.name());
        t.line("fg");
        t.expect("exec sleep 100'");
        // bash shows the command before it gives the job the terminal: a
        // Ctrl-C in between reaches bash, which ignores it. Again, then.
        t.interrupt_until_prompt();
        let out = t.run("echo st=$?.; jobs; echo end$((4))", "end4");
        assert!(out.starts_with("st=130."), "{}: {out:?}", kind.name());
        assert!(!out.contains("[1]"), "{}: {out:?}", kind.name());
    }
}

#[test]
fn jobs_output_matches_bash() {
    let (_t, home, work) = dirs();
    let mut outs = Vec::new();
    for kind in Kind::with(&[Kind::Bash]) {
        let mut t = Term::start(kind, &home, &work, 80, &[]);
        let started = t.run("sleep 100 & sleep 200 & echo end$((1))", "end1");
        assert!(
            started.starts_with("[1] ") && started.contains("\n[2] "),
            "{}: {started:?}",
            kind.name()
        );
        let listed = t.run("jobs; jobs -p | wc -l; echo end$((2))", "end2");
        // A job that ends is reported, at the latest before the next
        // prompt (bash may report it while the next command runs).
        t.line("kill %2; sleep 1; echo end$((3))");
        let notice = t.expect("end3") + &t.expect("PROMPT> ");
        let notice = strip_csi(&notice).replace('\r', "");
        let notice = notice.contains("[2]+  Terminated              sleep 200\n");
        let after = t.run("kill %1; wait; jobs; echo end$((4))", "end4");
        outs.push((kind, listed, notice, after));
    }
    let (_, listed, notice, after) = &outs[0];
    assert_eq!(
        listed,
        "[1]-  Running                 sleep 100 &\n[2]+  Running                 sleep 200 &\n2\n"
    );
    assert!(notice, "no notice of the killed job");
    assert_eq!(after, "[1]+  Terminated              sleep 100\n");
    for (kind, l, n, a) in &outs[1..] {
        assert_eq!((listed, notice), (l, n), "rush against {}", kind.name());
        // Whether bash's `jobs` after `wait` still lists a job that `wait`
        // reaped depends on when its SIGCHLD handler ran (CI's bash 5.2
        // printed nothing once): it may have told of the job already.
        assert!(
            a == after || a.is_empty(),
            "rush against {}: {a:?}",
            kind.name()
        );
    }
}

/// A PATH folder with one command, and a folder with a file whose name
/// has a space.
fn completion_fixture(work: &Path) -> String {
    use std::os::unix::fs::PermissionsExt;
    let bin = work.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let cmd = bin.join("zzqcommand");
    std::fs::write(&cmd, "#!/bin/sh\necho ran-zzq\n").unwrap();
    std::fs::set_permissions(&cmd, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(work.join("my file.txt"), "content-of-spaced\n").unwrap();
    std::fs::create_dir_all(work.join("subdir")).unwrap();
    std::fs::write(work.join("subdir/inner"), "x").unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn tab_completes_commands_files_and_variables() {
    let (_t, home, work) = dirs();
    let path = completion_fixture(&work);
    for kind in Kind::with(&[Kind::Bash, Kind::Zsh]) {
        let mut t = Term::start(
            kind,
            &home,
            &work,
            80,
            &[("PATH", &path), ("ZZVARIABLE", "val-zz")],
        );
        // A command from PATH.
        t.send("zzqcomm\t");
        t.expect("zzqcommand");
        t.send("\r");
        t.expect("ran-zzq");
        t.expect("PROMPT> ");
        // A file whose name has a space: quoted on the line, one word.
        t.send("cat my\t");
        t.expect("file.txt");
        t.send("\r");
        t.expect("content-of-spaced");
        t.expect("PROMPT> ");
        // A variable name.
        t.send("echo $ZZVARI\t");
        t.expect("ABLE");
        t.send("\r");
        t.expect("val-zz");
        t.expect("PROMPT> ");
        // cd: folders only (the folder gets its slash).
        t.send("cd sub\t");
        t.expect("dir");
        t.send("\r");
        t.expect("PROMPT> ");
        let out = t.run("pwd; echo end$((1))", "end1");
        assert!(out.contains("/work/subdir\n"), "{}: {out:?}", kind.name());
    }
}

#[test]
fn tab_completes_git_subcommands_through_git_completion() {
    let git = Path::new("/usr/share/bash-completion/completions/git");
    assert!(
        git.is_file() && which("git"),
        "git or its completion script is missing: apt-get install git"
    );
    let (_t, home, work) = dirs();
    for kind in Kind::with(&[Kind::Bash]) {
        let mut t = Term::start(kind, &home, &work, 80, &[]);
        t.run(&format!("source {}; echo end$((1))", git.display()), "end1");
        t.send("git chec\t");
        t.expect("kout");
        // Ctrl-U clears the line; a second word: `git log --fo<Tab>`.
        t.send("\x15");
        t.send("git log --for\t");
        t.expect("mat=");
        t.send("\x15");
        t.run("echo end$((2))", "end2");
    }
}

#[test]
fn coloured_prompt_and_a_long_line_that_wraps() {
    let (_t, home, work) = dirs();
    let ps1 = "\\[\\e[1;32m\\]colour\\[\\e[0m\\]> ";
    let mut screens = Vec::new();
    for kind in Kind::with(&[Kind::Bash]) {
        let mut t = Term::start(kind, &home, &work, 40, &[]);
        t.line(&format!("PS1='{ps1}'"));
        // The prompt as drawn (the typed line has `\e`, not ESC).
        t.expect("colour\x1b[0m> ");
        let long = "x".repeat(70);
        t.send(&format!("echo {long}"));
        // Back to the start and insert: the editor must redraw the
        // wrapped line where it is.
        t.send("\x01");
        for _ in 0..5 {
            t.send("\x1b[C");
        }
        t.send("yy");
        t.send("\r");
        t.expect(&format!("yy{long}"));
        t.expect("> ");
        screens.push((kind, t.screen()));
    }
    let (_, rows) = &screens[0];
    let at = rows
        .iter()
        .position(|r| r.starts_with("colour> echo yy"))
        .unwrap_or_else(|| panic!("{rows:#?}"));
    // 8 columns of prompt (the escapes take none), then the line, wrapped
    // at 40.
    assert_eq!(rows[at], format!("colour> echo yy{}", "x".repeat(40 - 15)));
    assert_eq!(rows[at + 1], "x".repeat(40));
    assert_eq!(rows[at + 2], "x".repeat(5));
    for (kind, theirs) in &screens[1..] {
        let b = theirs
            .iter()
            .position(|r| r.starts_with("colour> echo yy"))
            .unwrap_or_else(|| panic!("{theirs:#?}"));
        assert_eq!(
            rows[at..at + 5],
            theirs[b..b + 5],
            "screen, rush against {}",
            kind.name()
        );
    }
}

/// Waits (in poll, on a pidfd) until `pid` has ended; false after `ms`.
fn ends_within(pid: libc::pid_t, ms: i32) -> bool {
    // SAFETY: pidfd_open and poll with a valid pollfd; the fd is closed.
    unsafe {
        let fd = libc::syscall(libc::SYS_pidfd_open, pid, 0) as libc::c_int;
        if fd < 0 {
            // Already gone.
            return true;
        }
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let n = libc::poll(&mut p, 1, ms);
        libc::close(fd);
        n == 1
    }
}

#[test]
fn a_hang_up_reaches_the_jobs() {
    let (_t, home, work) = dirs();
    for kind in Kind::with(&[Kind::Bash]) {
        let mut t = Term::start(kind, &home, &work, 80, &[]);
        let out = t.run(
            "sleep 300 & echo pid=$!=; sleep 301 & echo end$((1))",
            "end1",
        );
        let pid: libc::pid_t = out
            .split("pid=")
            .nth(1)
            .and_then(|r| r.split('=').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("{}: {out:?}", kind.name()));
        t.send("sleep 302\r");
        let shell_pid = t.child.process_id();
        let seen = String::from_utf8_lossy(&t.all).into_owned();
        let started = Instant::now();
        drop(t);
        // (bash sometimes misses the SIGHUP, is killed after 5 s, and its
        // jobs stay: only rush is held to it.)
        let ended = ends_within(pid, 5000);
        if !ended && kind != Kind::Rush {
            // SAFETY: cleaning up the peer's orphan.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            continue;
        }
        assert!(
            ended,
            "{}: its job outlived the hang-up (shell {shell_pid:?} gone after {:?}); output:\n{seen}",
            kind.name(),
            started.elapsed()
        );
        // At the prompt, a hang-up ends the shell at once; the history is
        // saved first.
        let mut t = Term::start(kind, &home, &work, 80, &[]);
        t.run("echo before-hup-$((1))", "before-hup-1");
        let started = Instant::now();
        drop(t);
        // (bash sometimes misses a SIGHUP that comes as its prompt is
        // drawn, and is killed after 5 s: only rush is held to it.)
        if kind == Kind::Rush {
            assert!(
                started.elapsed() < Duration::from_secs(4),
                "rush kept running"
            );
        }
        let saved = std::fs::read_to_string(home.join("history")).unwrap_or_default();
        assert!(
            saved.contains("echo before-hup-$((1))"),
            "{}: {saved:?}",
            kind.name()
        );
    }
}

/// Jobs started just before the hang-up get it too: a job's child that has
/// not yet put its signals back to their defaults (it still runs the
/// shell's code) must not swallow the SIGHUP in the handler it inherited
/// (it did, and a few of 50 such jobs outlived the shell in most rounds).
#[test]
fn a_hang_up_reaches_jobs_started_just_before_it() {
    let (_t, home, work) = dirs();
    for round in 0..3 {
        let mut t = Term::start(Kind::Rush, &home, &work, 80, &[]);
        t.run(
            "for i in $(seq 50); do sleep 300 & done 2>/dev/null; jobs -p >pids; echo end$((1))",
            "end1",
        );
        let pids: Vec<libc::pid_t> = std::fs::read_to_string(work.join("pids"))
            .unwrap()
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect();
        assert_eq!(pids.len(), 50);
        drop(t);
        let outlived: Vec<_> = pids.iter().filter(|&&p| !ends_within(p, 3000)).collect();
        for &&p in &outlived {
            // SAFETY: cleaning up the orphan.
            unsafe { libc::kill(p, libc::SIGKILL) };
        }
        assert!(
            outlived.is_empty(),
            "round {round}: {outlived:?} outlived the hang-up"
        );
    }
}

#[test]
fn terminal_modes_come_back_after_a_killed_job() {
    let (_t, home, work) = dirs();
    for kind in Kind::with(&[Kind::Bash]) {
        let mut t = Term::start(kind, &home, &work, 80, &[]);
        // A program that turns echo off and dies without restoring it.
        t.run("sh -c 'stty -echo; kill -9 $$'; echo end$((1))", "end1");
        let out = t.run(
            "stty -a | tr ' ' '\\n' | grep -x -- '-*echo'; echo end$((2))",
            "end2",
        );
        assert!(out.starts_with("echo\n"), "{}: {out:?}", kind.name());
    }
}

#[test]
fn long_commands_report_their_time() {
    let (_t, home, work) = dirs();
    let mut t = Term::start(Kind::Rush, &home, &work, 80, &[("RUSH_REPORTTIME", "0.2")]);
    t.run("sleep 0.3; echo end$((1))", "end1");
    let all = strip_csi(&String::from_utf8_lossy(&t.all)).replace('\r', "");
    assert!(
        all.contains("sleep 0.3; echo end$((1))  0.00s user"),
        "no report: {all:?}"
    );
    // A quick command says nothing.
    t.run("true; echo end$((2))", "end2");
    let all = strip_csi(&String::from_utf8_lossy(&t.all));
    assert_eq!(all.matches("total").count(), 1, "{all:?}");
}

#[test]
fn prompt_command_runs_before_each_prompt() {
    let (_t, home, work) = dirs();
    for kind in Kind::with(&[Kind::Bash]) {
        let env = [("PROMPT_COMMAND", "echo pc$((40+2))")];
        let mut t = Term::start(kind, &home, &work, 80, &env);
        t.line("echo ran$((1))");
        t.expect("ran1");
        // Once more after the command, before the next prompt.
        let before = t.expect("PROMPT> ");
        assert!(before.contains("pc42"), "{}: {before:?}", kind.name());
    }
}

/// `kill %1` of a stopped job ends it: the shell follows SIGTERM with
/// SIGCONT, `wait` gets its 143, and Ctrl-D then leaves (and writes the
/// history). Before, the job stayed `Stopped`, `wait` never returned and
/// Ctrl-D was refused with "There are stopped jobs". (rush alone: bash's
/// `wait` right after the `kill` races the job's SIGCONT and may still
/// find it stopped.)
#[test]
fn kill_ends_a_stopped_job() {
    let (_t, home, work) = dirs();
    let kind = Kind::Rush;
    let mut t = Term::start(kind, &home, &work, 80, &[]);
    t.line("sh -c 'echo go$((6*7)); exec sleep 30'");
    t.expect("go42");
    t.send("\x1a");
    let out = t.expect("PROMPT> ");
    assert!(out.contains("Stopped"), "{}: {out:?}", kind.name());
    let out = t.run("kill %1; wait %1; echo st=$?; jobs; echo end$((1))", "end1");
    assert!(out.contains("st=143"), "{}: {out:?}", kind.name());
    assert!(!out.contains("Stopped"), "{}: {out:?}", kind.name());
    t.send("\x04");
    let status = t.child.wait().unwrap();
    assert!(status.success(), "{}: {status:?}", kind.name());
}

/// `bind` and the inputrc file change what keys do in the editor, as in
/// bash: a key bound to a readline function (from INPUTRC, under `$if
/// mode=emacs`), a macro, a `bind -x` command that edits READLINE_LINE
/// and READLINE_POINT, and a `set` variable that `bind -v` reports.
/// Before, rush had no `bind` (command not found) and read no inputrc.
#[test]
fn bind_and_inputrc_change_the_keys() {
    let (_t, home, work) = dirs();
    let inputrc = home.join("inputrc");
    std::fs::write(
        &inputrc,
        "# comment\n$if mode=emacs\n\"\\C-t\": backward-char\n$else\n\"\\C-t\": kill-line\n$endif\nset completion-ignore-case on\n",
    )
    .unwrap();
    let inputrc = inputrc.to_str().unwrap().to_string();
    std::fs::write(work.join("ReadMe.txt"), "content42\n").unwrap();
    for kind in Kind::with(&[Kind::Bash]) {
        let mut t = Term::start(kind, &home, &work, 80, &[("INPUTRC", &inputrc)]);
        // Ctrl-T from the inputrc moves back one character.
        t.send("echo ab\x14X\r");
        t.expect("aXb");
        t.expect("PROMPT> ");
        t.line("bind -v | grep ignore-case; echo v$((1))");
        let out = t.expect("v1");
        assert!(
            out.contains("set completion-ignore-case on"),
            "{}: {out:?}",
            kind.name()
        );
        t.expect("PROMPT> ");
        // ... and it takes effect: a file name completes in any case.
        t.send("cat readm\t");
        t.send("\r");
        t.expect("content42");
        t.expect("PROMPT> ");
        // A macro types its text.
        t.line(r#"bind '"\eq": "echo macro$((2+3))"'"#);
        t.expect("PROMPT> ");
        t.send("\x1bq\r");
        t.expect("macro5");
        t.expect("PROMPT> ");
        // A shell command sees the line and the point, and replaces both.
        t.line(r#"bind -x '"\C-y": READLINE_LINE="echo x${READLINE_LINE}y$READLINE_POINT"; READLINE_POINT=5'"#);
        t.expect("PROMPT> ");
        t.send("ab\x02\x19Z\r");
        t.expect("Zxaby1");
        t.expect("PROMPT> ");
    }
}

/// `!!:p` at the prompt shows the expanded command and does not run it;
/// the next `!!` runs it (bash). Before, the `:p` line ran the command.
#[test]
fn history_p_modifier_prints_without_running() {
    let (_t, home, work) = dirs();
    for kind in Kind::with(&[Kind::Bash]) {
        let mut t = Term::start(kind, &home, &work, 80, &[]);
        // A file of each shell's own, in the shared folder.
        let file = format!("counted-{}", kind.name());
        t.line(&format!("echo ran$((40+2)) >> {file}"));
        t.expect("PROMPT> ");
        t.line("!!:p");
        t.expect("PROMPT> ");
        t.line(&format!("wc -l < {file}; echo done$((1))"));
        let out = t.expect("done1");
        // One line in the file: the `:p` line did not run.
        assert!(
            strip_csi(&out).split(['\r', '\n']).any(|l| l.trim() == "1"),
            "{}: {out:?}",
            kind.name()
        );
        t.expect("PROMPT> ");
    }
}
