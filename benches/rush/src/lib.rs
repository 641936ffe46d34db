//! The rush workloads: each one a whole shell process, as agents run them,
//! timed with `wait4` and interleaved across rush, dash, bash, zsh and mksh.
//! The floor is what the workload cannot avoid: posix_spawn plus wait of
//! `/bin/true`, once per process the workload implies.

pub mod interactive;

use floor::Program;
use floor::driver::{self, Args};
use latency::process::time_command;
use latency::{BoxError, Options, Run, Sample, Subject, interleave};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub(crate) const SYSTEM: &str = "rush";

/// A shell to measure.
#[derive(Debug, Clone)]
pub struct Shell {
    pub name: String,
    pub version: String,
    pub path: PathBuf,
}

/// How a workload is handed to the shell.
#[derive(Debug, Clone)]
pub enum Input {
    /// `SHELL -c TEXT`
    Command(String),
    /// `SHELL FILE`
    Script(PathBuf),
}

/// One workload.
#[derive(Debug, Clone)]
pub struct Workload {
    pub name: &'static str,
    pub input: Input,
    /// What it must print on stdout (checked every time).
    pub expect: String,
    /// Processes it implies at the least (the shell itself included): the
    /// floor spawns `/bin/true` this many times.
    pub processes: usize,
    /// Rounds (quick, full).
    pub rounds: (usize, usize),
}

fn lines(n: usize, line: &str) -> String {
    let mut s = String::with_capacity(n * (line.len() + 1));
    for _ in 0..n {
        s.push_str(line);
        s.push('\n');
    }
    s
}

/// A small snapshot of the kind Claude Code sources before each command:
/// functions, aliases, options and exports.
const SNAPSHOT: &str = r#"# Snapshot file
unalias -a 2>/dev/null || true
shopt -s expand_aliases 2>/dev/null || true
gitroot () { git rev-parse --show-toplevel; }
mkcd () { mkdir -p "$1" && cd "$1"; }
alias ll='ls -l'
alias la='ls -A'
alias gs='git status'
export EDITOR=vi
export PAGER=less
export PATH="$PATH"
"#;

/// The wrapper Claude Code runs around each command.
pub fn wrapper(snapshot: &Path, cwd_file: &Path, cmd: &str) -> String {
    format!(
        "source {} 2>/dev/null || true && shopt -u extglob 2>/dev/null || true && {{ \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; }} >/dev/null 2>&1 || true && eval '{cmd}' < /dev/null && pwd -P >| {}",
        snapshot.display(),
        cwd_file.display()
    )
}

/// Writes the script files into `dir` and returns the workloads.
pub fn workloads(dir: &Path) -> anyhow::Result<Vec<Workload>> {
    std::fs::create_dir_all(dir)?;
    let write = |name: &str, text: &str| -> anyhow::Result<PathBuf> {
        let p = dir.join(name);
        std::fs::write(&p, text)?;
        Ok(p)
    };
    let snapshot = write("snapshot.sh", SNAPSHOT)?;
    let listing = dir.join("listing");
    std::fs::create_dir_all(&listing)?;
    for f in ["a.txt", "b.txt", "c.txt"] {
        std::fs::write(listing.join(f), "")?;
    }
    // The 20k-line file to source: assignments, functions and tests, as
    // in real rc files and snapshots.
    let mut big = String::new();
    for i in 0..5000 {
        big.push_str(&format!("v{i}=value{i}\n"));
        big.push_str(&format!("f{i}() {{ echo \"$v{i}\"; }}\n"));
        big.push_str(&format!("[ -n \"$v{i}\" ] && w{i}=set\n"));
        big.push_str(&format!("export E{i}=\"$v{i}\"\n"));
    }
    let source_me = write("source-me.sh", &big)?;
    let cwd_file = dir.join("cwd");
    Ok(vec![
        Workload {
            name: "-c true",
            input: Input::Command("true".into()),
            expect: String::new(),
            processes: 1,
            rounds: (30, 200),
        },
        Workload {
            name: "-c /bin/true",
            input: Input::Command("/bin/true".into()),
            expect: String::new(),
            processes: 1,
            rounds: (30, 200),
        },
        Workload {
            name: "agent wrapper (snapshot + ls)",
            input: Input::Command(wrapper(
                &snapshot,
                &cwd_file,
                &format!("ls {}", listing.display()),
            )),
            expect: "a.txt\nb.txt\nc.txt\n".into(),
            processes: 2,
            rounds: (30, 200),
        },
        Workload {
            name: "1000 lines of :",
            input: Input::Script(write("colon.sh", &lines(1000, ":"))?),
            expect: String::new(),
            processes: 1,
            rounds: (20, 100),
        },
        Workload {
            name: "1000 lines of echo x >/dev/null",
            input: Input::Script(write("echo.sh", &lines(1000, "echo x >/dev/null"))?),
            expect: String::new(),
            processes: 1,
            rounds: (20, 100),
        },
        Workload {
            name: "1000 lines of /bin/true",
            input: Input::Script(write("true.sh", &lines(1000, "/bin/true"))?),
            expect: String::new(),
            processes: 1001,
            rounds: (3, 10),
        },
        Workload {
            name: "1000 lines of x=$(pwd)",
            input: Input::Script(write("pwd.sh", &lines(1000, "x=$(pwd)"))?),
            expect: String::new(),
            processes: 1,
            rounds: (3, 20),
        },
        Workload {
            name: "source a 20k-line file",
            input: Input::Command(format!(". {}; f4999", source_me.display())),
            expect: "value4999\n".into(),
            processes: 1,
            rounds: (5, 30),
        },
        Workload {
            name: "loop: arithmetic and strings",
            input: Input::Script(write(
                "loop.sh",
                "i=0; s=; n=0\nwhile [ $i -lt 5000 ]; do\n  i=$((i + 1))\n  s=\"${s}x\"\n  case $i in\n    *5) n=$((n + 1)) ;;\n  esac\n  t=${s%x}\ndone\necho $i $n ${#t}\n",
            )?),
            expect: "5000 500 4999\n".into(),
            processes: 1,
            rounds: (5, 20),
        },
        Workload {
            name: "pipeline of 3 externals",
            input: Input::Command("/bin/echo hello | /usr/bin/tr a-z A-Z | /usr/bin/wc -c".into()),
            expect: "6\n".into(),
            processes: 4,
            rounds: (20, 100),
        },
    ])
}

fn command(shell: &Shell, w: &Workload) -> Command {
    let mut c = Command::new(&shell.path);
    match &w.input {
        Input::Command(text) => {
            c.arg("-c").arg(text);
        }
        Input::Script(p) => {
            c.arg(p);
        }
    }
    c.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    c
}

/// Runs the workload once in `shell` and checks what it printed.
fn run_once(shell: &Shell, w: &Workload) -> Result<Sample, BoxError> {
    let mut c = command(shell, w);
    let t = time_command(&mut c)?;
    if !t.status.success() {
        return Err(format!("{} failed {:?}: {}", shell.name, w.name, t.status).into());
    }
    Ok(t.sample())
}

/// What the workload prints in `shell` (checked once, before timing).
fn check(shell: &Shell, w: &Workload) -> anyhow::Result<()> {
    let out = command(shell, w).output()?;
    let got = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() || got.trim_end() != w.expect.trim_end() {
        anyhow::bail!(
            "{} on {:?}: status {}, printed {got:?}, expected {:?}",
            shell.name,
            w.name,
            out.status,
            w.expect
        );
    }
    Ok(())
}

/// The floor: `/bin/true` spawned and waited for `n` times, in-process.
fn floor_run(program: &Program, n: usize) -> Result<Sample, BoxError> {
    let mut total = 0u64;
    for _ in 0..n {
        total += program.posix_spawn_wait()?.value;
    }
    Ok(Sample::ns(total))
}

fn shells(args: &Args) -> anyhow::Result<Vec<Shell>> {
    let mut out = vec![Shell {
        name: "rush".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        path: args.bin("rush")?,
    }];
    // The same code linked dynamically, as `cargo install --path` builds it.
    if let Ok(dynamic) = args.sibling("rush") {
        out.push(Shell {
            name: "rush (dynamic, cargo install)".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            path: dynamic,
        });
    }
    for name in ["dash", "bash", "zsh", "mksh"] {
        match args.peer(name) {
            Some((path, version)) => out.push(Shell {
                name: name.into(),
                version,
                path,
            }),
            None => driver::note(format!("{name}: peer missing, no row"))?,
        }
    }
    Ok(out)
}

/// Runs every workload and emits its records.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let shells = shells(args)?;
    let dir = args.scratch.join("rush-bench");
    let workloads = workloads(&dir)?;
    driver::plan(workloads.len() as u64 + 5)?;
    let truth = Program::new("/bin/true", &[])?;
    for w in &workloads {
        driver::step(w.name)?;
        let mut ok = Vec::new();
        for s in &shells {
            match check(s, w) {
                Ok(()) => ok.push(s.clone()),
                Err(e) => driver::note(format!("{e:#}; no row"))?,
            }
        }
        let mut subjects: Vec<Subject<'_>> = ok
            .iter()
            .map(|s| {
                let s = s.clone();
                let w = w.clone();
                Subject::new(s.name.clone(), s.version.clone(), move || run_once(&s, &w))
            })
            .collect();
        let n = w.processes;
        let truth = &truth;
        subjects.push(Subject::new(
            format!("floor: {n} x posix_spawn+wait /bin/true"),
            "kernel",
            move || floor_run(truth, n),
        ));
        let rounds = args.pick(w.rounds.0, w.rounds.1);
        let opts = Options {
            warmup: rounds.div_ceil(10).max(1),
            rounds,
            min_rounds: rounds,
            budget: None,
        };
        let run = Run::new(SYSTEM, w.name, vec![]);
        driver::emit(&interleave(run, &mut subjects, opts)?)?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    interactive::run(args, &shells)
}
