//! fast-rm: a parallel recursive deleter, faster than `rm -r` and at least as
//! safe as GNU rm.
//!
//! - [`cli`]: the command line.
//! - [`safety`]: checks on each argument (`/`, `.`, `..`, devices) and the
//!   removal of arguments that another one covers.
//! - [`engine`]: the per-directory parallel deletion.
//! - [`report`]: counts, messages, progress and the JSON summary.

pub mod cli;
pub mod engine;
pub mod report;
pub mod safety;

use cli::{Cli, Interactive};
use report::Reporter;
use safety::Refusal;
use std::io::{IsTerminal, Write};

/// Runs the command and returns its exit status: 0 if everything named is
/// gone, 1 otherwise.
pub fn run(cli: &Cli) -> i32 {
    if cli.paths.is_empty() {
        if cli.force {
            return 0;
        }
        report::say("fast-rm: missing operand\nTry 'fast-rm --help' for more information.\n");
        return 1;
    }
    let reporter = Reporter::new(cli.verbose, cli.dry_run, cli.json, cli.progress);
    let preserve = cli.preserve();
    let mut checked = Vec::with_capacity(cli.paths.len());
    for arg in &cli.paths {
        match safety::check(arg, cli.force, preserve, cli.recursive) {
            Ok(c) => checked.push(c),
            Err(Refusal::Missing) => {}
            Err(Refusal::Error(lines)) => {
                let path = std::path::Path::new(arg);
                let mut lines = lines.into_iter();
                if let Some(first) = lines.next() {
                    reporter.fail(path, first);
                }
                for l in lines {
                    reporter.message(&format!("fast-rm: {l}"));
                }
            }
        }
    }
    let checked = safety::drop_covered(checked);
    let interactive = cli.interactive();
    // Only asked when it matters: a dry run and -f never prompt.
    let stdin_tty = || std::io::stdin().is_terminal();
    if interactive == Interactive::Once && !cli.dry_run && stdin_tty() {
        let dirs = checked.iter().any(|c| c.is_dir);
        if (checked.len() > 3 || dirs) && !confirm(&reporter, checked.len(), dirs) {
            return 0;
        }
    }
    let prompt = prompt(interactive, cli.dry_run, stdin_tty);
    // -i asks in order, one question at a time: one thread.
    let threads = if prompt.always {
        Some(1)
    } else {
        cli.threads.map(usize::from)
    };
    let cfg = engine::Config {
        dry_run: cli.dry_run,
        one_file_system: cli.one_file_system,
        threads,
        prompt,
    };
    engine::Engine::new(cfg, &reporter).run(checked.into_iter().map(|c| c.root).collect());
    let summary = reporter.finish();
    if cli.json {
        let mut out = std::io::stdout().lock();
        let _ = serde_json::to_writer(&mut out, &summary);
        let _ = writeln!(out);
    } else if cli.dry_run {
        report::say(&format!(
            "fast-rm: dry run: would remove {} files and {} directories{}\n",
            summary.files,
            summary.dirs,
            if summary.errors > 0 {
                format!(", {} errors", summary.errors)
            } else {
                String::new()
            }
        ));
    }
    i32::from(!summary.ok)
}

/// Asks once, as `rm -I` does.
fn confirm(reporter: &Reporter, n: usize, recursive: bool) -> bool {
    let what = if n == 1 { "argument" } else { "arguments" };
    let how = if recursive { " recursively" } else { "" };
    reporter.ask(&format!("remove {n} {what}{how}?"))
}

/// Which entries the engine asks about, as rm decides it: everything under
/// -i; otherwise write-protected entries, when standard input is a terminal
/// and -f was not given. Root may write to anything, so it is never asked
/// about write protection (rm's access check passes for root too), and the
/// check costs nothing then.
fn prompt(interactive: Interactive, dry_run: bool, stdin_tty: impl Fn() -> bool) -> engine::Prompt {
    if dry_run {
        return engine::Prompt::default();
    }
    let always = interactive == Interactive::Always;
    let write_protected = match interactive {
        Interactive::Never => false,
        Interactive::Always => true,
        Interactive::WriteProtected | Interactive::Once => stdin_tty(),
    } && !rustix::process::geteuid().is_root();
    engine::Prompt {
        always,
        write_protected,
    }
}
