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

use clap::{CommandFactory, FromArgMatches};
use cli::{Cli, Interactive};
use report::Reporter;
use safety::Refusal;
use std::ffi::OsString;
use std::io::{IsTerminal, Write};

/// How the program was invoked, beside its options.
#[derive(Debug, Clone, Copy, Default)]
pub struct Invocation {
    /// Under the name `rm`: rm's rules, so that an alias or a link cannot
    /// turn `rm dir` into a recursive removal (a directory needs -r, -R or
    /// -d).
    pub as_rm: bool,
    /// rm's hidden `---presume-input-tty` (its test suite's): prompts as if
    /// standard input were a terminal.
    pub presume_tty: bool,
}

/// The whole program, from its arguments (`args[0]` is the name it was
/// invoked under): its exit status.
pub fn main(mut args: Vec<OsString>) -> i32 {
    let name = args
        .first()
        .and_then(|a| std::path::Path::new(a).file_name())
        .map_or_else(
            || "fast-rm".to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
    let mut inv = Invocation {
        as_rm: name == "rm",
        presume_tty: false,
    };
    report::set_program(&name);
    // Options end at `--`; rm's hidden option is looked for before it.
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let before = args.len();
    let mut i = 0;
    args.retain(|a| {
        i += 1;
        !(i <= end && a == "---presume-input-tty")
    });
    inv.presume_tty = args.len() < before;
    let name = report::program();
    let mut command = Cli::command().name(name).bin_name(name);
    if inv.as_rm {
        let about = "Remove (unlink) files, and directories with -r, -R or -d: fast-rm, \
                     invoked as rm (in parallel; symbolic links are removed, never followed).";
        command = command.about(about).long_about(about);
    }
    let parsed = command
        .try_get_matches_from(args)
        .and_then(|m| Cli::from_arg_matches(&m));
    match parsed {
        Ok(cli) => run(&cli, inv),
        Err(e) => {
            // Help and version go to stdout with status 0; usage errors
            // exit 1, as rm's do.
            let code = i32::from(e.use_stderr());
            let _ = e.print();
            code
        }
    }
}

/// Runs the command and returns its exit status: 0 if everything named is
/// gone, 1 otherwise.
pub fn run(cli: &Cli, inv: Invocation) -> i32 {
    let me = report::program();
    if cli.paths.is_empty() {
        if cli.force {
            return 0;
        }
        report::say(&format!(
            "{me}: missing operand\nTry '{me} --help' for more information.\n"
        ));
        return 1;
    }
    // rm recurses with -r or -R; fast-rm always, unless -d asks for empty
    // directories only.
    let recursive = cli.recursive || (!inv.as_rm && !cli.dir);
    let interactive = cli.interactive();
    // -I: one question before anything, standard input a terminal or not,
    // as rm asks it: for more than three arguments, or a recursive removal
    // (rm: -r given; fast-rm, which recurses by itself: some argument is a
    // directory).
    if interactive == Interactive::Once && !cli.dry_run {
        report::use_locale();
        let recursing = if inv.as_rm {
            cli.recursive
        } else {
            recursive
                && cli
                    .paths
                    .iter()
                    .any(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
        };
        if (recursing || cli.paths.len() > 3) && !confirm(cli.paths.len(), recursing) {
            return 0;
        }
    }
    let reporter = Reporter::new(cli.verbose, cli.dry_run, cli.json, cli.progress);
    let preserve = cli.preserve();
    // Only asked when it matters: a dry run and -f never prompt.
    let stdin_tty = || inv.presume_tty || std::io::stdin().is_terminal();
    let prompt = prompt(interactive, cli.dry_run, stdin_tty);
    // The locale's yes and no, read only where a question may come (and
    // before any other thread runs): the run that asks nothing pays
    // nothing for it.
    if prompt.always || prompt.write_protected {
        report::use_locale();
    }
    // -i asks in order, one question at a time: one thread.
    let threads = if prompt.always {
        Some(1)
    } else {
        cli.threads.map(usize::from)
    };
    let cfg = engine::Config {
        dry_run: cli.dry_run,
        recursive,
        one_file_system: cli.one_file_system,
        threads,
        prompt,
    };
    let engine = engine::Engine::new(cfg, &reporter);
    // Each argument is checked, then removed, before the next, as rm does:
    // messages come in the arguments' order, and an argument that an
    // earlier one covered finds its work done.
    for arg in &cli.paths {
        // (The refusals of `.`, `..` and `/` are worded by -r, as rm's.)
        match safety::check(arg, cli.force, preserve, cli.recursive) {
            Ok(c) if c.is_dir && !recursive && !cli.dir => {
                let path = &safety::shown(arg);
                reporter.fail(
                    path,
                    format!("cannot remove {}: Is a directory", report::quote(path)),
                );
            }
            // rm -d looks into a directory before it removes it, and says
            // it is not empty even where the kernel's rmdir would say
            // "Permission denied" (its parent not writable), and of one
            // it cannot read.
            Ok(c) if c.is_dir && !recursive && safety::may_have_entries(arg) => {
                let path = &safety::shown(arg);
                reporter.fail(
                    path,
                    format!("cannot remove {}: Directory not empty", report::quote(path)),
                );
            }
            Ok(c) => engine.remove(c.root),
            Err(Refusal::Missing) => {}
            Err(Refusal::Error(lines)) => {
                let path = std::path::Path::new(arg);
                let mut lines = lines.into_iter();
                if let Some(first) = lines.next() {
                    reporter.fail(path, first);
                }
                for l in lines {
                    reporter.message(&format!("{me}: {l}"));
                }
            }
        }
    }
    let summary = reporter.finish();
    if cli.json {
        let mut out = std::io::stdout().lock();
        let _ = serde_json::to_writer(&mut out, &summary);
        let _ = writeln!(out);
    } else if cli.dry_run {
        report::say(&format!(
            "{me}: dry run: would remove {} files and {} directories{}\n",
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

/// Asks once, as `rm -I` does, before anything is looked at: no other
/// message can come first, and nothing is touched before the answer.
fn confirm(n: usize, recursive: bool) -> bool {
    let what = if n == 1 { "argument" } else { "arguments" };
    let how = if recursive { " recursively" } else { "" };
    report::ask_alone(&format!("remove {n} {what}{how}?"))
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
