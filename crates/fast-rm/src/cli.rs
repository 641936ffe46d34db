//! The command line, familiar to rm users.

use crate::report::ProgressMode;
use clap::{ArgAction, Parser, ValueEnum};
use std::ffi::OsString;
use std::num::NonZeroUsize;

/// `--preserve-root[=all]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PreserveRoot {
    /// Refuse `/` (the default).
    #[value(name = "default", hide = true)]
    Default,
    /// Also refuse any argument on another device than its parent.
    All,
}

/// Remove files and directories, recursively and in parallel.
///
/// Recursion is implied, unless -d is given without -r (then directories
/// are removed only when empty, as `rm -d`). Installed or linked under the
/// name `rm`, it is rm: a directory is removed only with -r, -R or -d.
/// Symbolic links are removed, never followed. `/` is refused unless
/// --no-preserve-root; `.` and `..` are refused always. Exit status: 0 if
/// everything named is gone, 1 otherwise.
#[derive(Debug, Parser)]
#[command(
    name = "fast-rm",
    version,
    max_term_width = 100,
    args_override_self = true
)]
pub struct Cli {
    /// Ignore missing paths, never prompt.
    #[arg(short = 'f', long, overrides_with_all = ["interactive_once", "interactive_always", "interactive"])]
    pub force: bool,

    /// Prompt before every removal.
    #[arg(short = 'i', overrides_with_all = ["force", "interactive_once", "interactive"])]
    pub interactive_always: bool,

    /// Remove directories and their contents recursively (implied, unless
    /// invoked as rm or given -d).
    #[arg(short = 'r', visible_short_alias = 'R', long, action = ArgAction::SetTrue)]
    pub recursive: bool,

    /// Remove empty directories.
    #[arg(short = 'd', long = "dir")]
    pub dir: bool,

    /// Print each path as it is removed.
    #[arg(short, long)]
    pub verbose: bool,

    /// Count and list what would be removed; touch nothing.
    #[arg(short = 'n', long)]
    pub dry_run: bool,

    /// Worker threads for large trees [default: the number of CPUs; one more
    /// on a disk filesystem, where unlinks also wait].
    #[arg(short = 'j', long, value_name = "N")]
    pub threads: Option<NonZeroUsize>,

    /// Do not remove directories on another filesystem than their argument.
    #[arg(long)]
    pub one_file_system: bool,

    /// Refuse to remove `/` (the default); with =all, also refuse any argument
    /// on another device than its parent.
    #[arg(
        long,
        value_name = "all",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "default",
        overrides_with = "no_preserve_root"
    )]
    pub preserve_root: Option<PreserveRoot>,

    /// Do not treat `/` specially.
    #[arg(long, overrides_with = "preserve_root")]
    pub no_preserve_root: bool,

    /// Prompt once before removing more than three arguments, or when
    /// removing recursively; the answer is read from standard input, a
    /// terminal or not.
    #[arg(short = 'I', overrides_with_all = ["force", "interactive_always", "interactive"])]
    pub interactive_once: bool,

    /// Prompt never, once (-I) or always (-i) [default without WHEN: always].
    #[arg(
        long,
        value_enum,
        value_name = "WHEN",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "always",
        overrides_with_all = ["force", "interactive_always", "interactive_once"]
    )]
    pub interactive: Option<When>,

    /// When to show progress.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    pub progress: ProgressMode,

    /// Print a JSON summary on stdout: counts, errors and elapsed time.
    #[arg(long)]
    pub json: bool,

    /// What to remove.
    #[arg(value_name = "PATH")]
    pub paths: Vec<OsString>,
}

/// `--interactive=WHEN`, with GNU rm's spellings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum When {
    #[value(alias = "no", alias = "none")]
    Never,
    Once,
    #[value(alias = "yes")]
    Always,
}

/// How much to ask, all flags considered (the last of -f, -i, -I and
/// --interactive wins, as in rm).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interactive {
    /// Never ask.
    Never,
    /// Ask only for write-protected entries, when standard input is a
    /// terminal (rm's default).
    WriteProtected,
    /// Ask once up front (-I), and for write-protected entries.
    Once,
    /// Ask before every removal (-i).
    Always,
}

impl Cli {
    /// What the prompting flags add up to.
    pub fn interactive(&self) -> Interactive {
        if self.force {
            Interactive::Never
        } else if self.interactive_always {
            Interactive::Always
        } else if self.interactive_once {
            Interactive::Once
        } else {
            match self.interactive {
                Some(When::Never) => Interactive::Never,
                Some(When::Once) => Interactive::Once,
                Some(When::Always) => Interactive::Always,
                None => Interactive::WriteProtected,
            }
        }
    }

    /// `None` for --no-preserve-root.
    pub fn preserve(&self) -> Option<PreserveRoot> {
        if self.no_preserve_root {
            None
        } else {
            Some(self.preserve_root.unwrap_or(PreserveRoot::Default))
        }
    }
}
