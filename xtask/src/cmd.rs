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
