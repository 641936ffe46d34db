//! What the tests share: a daemon of their own, run as the command line
//! runs it ([`Daemon`]) or in the test's process ([`Server`]).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// An empty git work tree (a `.git` folder) in a temporary folder, and its
/// canonical path.
pub fn repo() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let root = t.path().canonicalize().unwrap();
    std::fs::create_dir(root.join(".git")).unwrap();
    (t, root)
}

/// Writes `text` to `rel` under `root`, making its folders.
pub fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// A daemon of the test's own (its socket and indexes in a temporary
/// folder), stopped when dropped.
pub struct Daemon {
    pub dir: tempfile::TempDir,
}

impl Daemon {
    pub fn start() -> Daemon {
        let d = Daemon {
            dir: tempfile::tempdir().unwrap(),
        };
        let o = d.cmd().args(["daemon", "start"]).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        d
    }
    pub fn cmd(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_greppy"));
        c.env("XDG_RUNTIME_DIR", self.dir.path().join("run"))
            .env("XDG_CACHE_HOME", self.dir.path().join("cache"))
            .env_remove("GREPPY_NO_DAEMON");
        c
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.cmd().args(["daemon", "stop"]).output();
    }
}

impl Daemon {
    /// `greppy ARGS` in `cwd`, which must succeed or find nothing; stdout.
    pub fn run(&self, args: &[&str], cwd: &Path) -> String {
        let o = self.output(args, cwd);
        assert!(
            o.status.code().is_some_and(|c| c < 2),
            "greppy {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    pub fn output(&self, args: &[&str], cwd: &Path) -> Output {
        self.cmd().args(args).current_dir(cwd).output().unwrap()
    }

    /// `greppy index PATH`.
    pub fn index(&self, path: &Path) {
        let o = self.cmd().arg("index").arg(path).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }

    /// The socket.
    pub fn socket(&self) -> std::path::PathBuf {
        self.dir.path().join("run/greppy/socket")
    }

    /// The daemon's pid, from its socket (SO_PEERCRED).
    pub fn pid(&self) -> i32 {
        let s = std::os::unix::net::UnixStream::connect(self.socket()).unwrap();
        rustix::net::sockopt::socket_peercred(&s)
            .unwrap()
            .pid
            .as_raw_nonzero()
            .get()
    }
}

/// A daemon served in the test's process, on a socket in a temporary
/// folder, by a runtime of its own that stops when this is dropped.
pub struct Server {
    pub rt: tokio::runtime::Runtime,
    pub socket: PathBuf,
    /// `daemon::serve`'s task: it ends only if serving fails.
    pub served: tokio::task::JoinHandle<std::io::Result<()>>,
    pub dir: tempfile::TempDir,
}

impl Server {
    pub fn start(limits: greppy::daemon::Limits) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("run/greppy/socket");
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let listener = rt
            .block_on(async { greppy::daemon::bind(&socket) })
            .unwrap();
        let served = rt.spawn(greppy::daemon::serve(listener, limits, None));
        Server {
            rt,
            socket,
            served,
            dir,
        }
    }
}
