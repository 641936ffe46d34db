//! Running other programs, loudly: every command is echoed before it runs.

use anyhow::{Context, Result, bail};
use std::process::{Command, Stdio};

/// Runs `cmd` with inherited streams; an unsuccessful exit is an error.
pub fn run(cmd: &mut Command) -> Result<()> {
    eprintln!("$ {}", show(cmd));
    let status = cmd
        .status()
        .with_context(|| format!("cannot run {}", show(cmd)))?;
    if !status.success() {
        bail!("`{}` failed: {status}", show(cmd));
    }
    Ok(())
}

/// Runs `cmd` and returns its stdout, trimmed; `None` if it cannot run or fails.
pub fn output(cmd: &mut Command) -> Option<String> {
    let out = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Whether `program` is on the PATH.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// The cargo that runs us.
pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

pub fn show(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `cmd` (a `timeout …` command, which leads a process group of its
/// own) and returns its status and its standard output (with its standard
/// error too when `with_stderr`).
///
/// The output goes to a file, not a pipe: what `cmd` runs can leave
/// children behind, and they would hold a pipe open, so reading it to its
/// end would wait for them. Once `cmd` is done, what is left of its process
/// group is killed: before `cmd` is reaped, so that its process id, the
/// group's, cannot have been given to another process meanwhile.
pub fn contained(
    cmd: &mut Command,
    with_stderr: bool,
    what: &str,
) -> Result<(std::process::ExitStatus, Vec<u8>)> {
    use nix::sys::signal::{Signal, killpg};
    use nix::sys::wait::{Id, WaitPidFlag, waitid};
    use nix::unistd::Pid;
    use std::io::{Read, Seek};

    let mut out = tempfile::tempfile().context("a temporary file for a command's output")?;
    cmd.stdout(out.try_clone()?);
    if with_stderr {
        cmd.stderr(out.try_clone()?);
    }
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot run {}", show(cmd)))?;
    let pid = Pid::from_raw(i32::try_from(child.id())?);
    // Waits for the exit and leaves the child unreaped (WNOWAIT).
    waitid(Id::Pid(pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT)
        .with_context(|| format!("waiting for {what}"))?;
    // ESRCH when it led no group of its own: nothing to kill.
    let _ = killpg(pid, Signal::SIGKILL);
    let status = child.wait()?;
    let mut bytes = Vec::new();
    out.rewind()?;
    out.read_to_end(&mut bytes)?;
    Ok((status, bytes))
}

/// Unpacks `paths` (all of the tree when empty) of `rev` from the git
/// repository `git_dir` into `dest`; whether it went well.
pub fn git_unpack(
    git_dir: &std::path::Path,
    rev: &str,
    paths: &[&str],
    dest: &std::path::Path,
) -> Result<bool> {
    let archive = Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args(["archive", rev])
        .args(paths)
        .stdout(Stdio::piped())
        .spawn()
        .context("running git archive")?;
    let status = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(dest)
        .stdin(archive.stdout.context("git archive's output")?)
        .status()?;
    Ok(status.success())
}

/// `apt-get install -y PKGS`, non-interactive, after one `apt-get update`
/// per run.
pub fn apt_install(pkgs: &[&str]) -> Result<()> {
    static UPDATED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if !*UPDATED.get_or_init(|| apt(&["update", "-q"]).is_ok()) {
        bail!("apt-get update failed");
    }
    let mut args = vec!["install", "-y", "-q"];
    args.extend(pkgs);
    apt(&args)
}

fn apt(args: &[&str]) -> Result<()> {
    run(Command::new("apt-get")
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive"))
}
