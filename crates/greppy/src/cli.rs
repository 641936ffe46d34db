//! The command line, with ripgrep's flags and defaults.

use crate::search::{self, Filters, Options, Output, Pattern};
use clap::Parser;
use std::io::IsTerminal;
use std::path::PathBuf;

/// Search code like ripgrep: `greppy PATTERN [PATH...]`.
///
/// The output, the files searched (.gitignore, hidden files, binary files)
/// and the exit status are rg's: 0 if something was found, 1 if nothing
/// was, 2 on an error.
#[derive(Debug, Parser)]
#[command(name = "greppy", version, max_term_width = 100)]
pub struct Cli {
    /// A regular expression (rg's syntax), or a literal string with -F.
    pub pattern: String,
    /// Files and folders to search [default: the current folder].
    pub paths: Vec<PathBuf>,
    /// The pattern is a literal string, not a regular expression.
    #[arg(short = 'F', long)]
    pub fixed_strings: bool,
    /// Ignore case.
    #[arg(short = 'i', long)]
    pub ignore_case: bool,
    /// Ignore case unless the pattern has an uppercase letter.
    #[arg(short = 'S', long)]
    pub smart_case: bool,
    /// Only whole words.
    #[arg(short = 'w', long)]
    pub word_regexp: bool,
    /// Only files matching the glob (`!GLOB` excludes); repeatable.
    #[arg(short = 'g', long = "glob", value_name = "GLOB")]
    pub globs: Vec<String>,
    /// Only files of this type (rg's names: rust, py, go, …); repeatable.
    #[arg(short = 't', long = "type", value_name = "TYPE")]
    pub types: Vec<String>,
    /// Print only the paths of files with a match.
    #[arg(short = 'l', long)]
    pub files_with_matches: bool,
    /// Print the number of matching lines per file.
    #[arg(short = 'c', long)]
    pub count: bool,
    /// At most N matching lines per file.
    #[arg(short = 'm', long = "max-count", value_name = "N")]
    pub max_count: Option<u64>,
    /// Lines of context after each match.
    #[arg(short = 'A', long = "after-context", value_name = "N")]
    pub after: Option<usize>,
    /// Lines of context before each match.
    #[arg(short = 'B', long = "before-context", value_name = "N")]
    pub before: Option<usize>,
    /// Lines of context around each match.
    #[arg(short = 'C', long = "context", value_name = "N")]
    pub context: Option<usize>,
    /// Show line numbers (the default on a terminal).
    #[arg(short = 'n', long)]
    pub line_number: bool,
    /// Hide line numbers.
    #[arg(short = 'N', long)]
    pub no_line_number: bool,
    /// rg's JSON Lines messages (begin, match, context, end, summary).
    #[arg(long)]
    pub json: bool,
    /// When to colour.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    pub color: When,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum When {
    /// On a terminal.
    Auto,
    Always,
    Never,
}

/// Runs the command line; returns the exit status.
pub fn main() -> i32 {
    // `greppy search PATTERN` is `greppy PATTERN`.
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "search") {
        args.remove(1);
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    match run(&cli) {
        Ok(found) => i32::from(!found),
        Err(Failed) => 2,
    }
}

/// The search could not be done, or some files could not be searched; the
/// errors are printed already.
#[derive(Debug)]
struct Failed;

impl From<anyhow::Error> for Failed {
    fn from(e: anyhow::Error) -> Self {
        eprintln!("greppy: {e:#}");
        Failed
    }
}

fn run(cli: &Cli) -> Result<bool, Failed> {
    let tty = std::io::stdout().is_terminal();
    let paths = if cli.paths.is_empty() {
        vec![PathBuf::from("./")]
    } else {
        cli.paths.clone()
    };
    // rg leaves the path out when it searches one named file.
    let one_file = paths.len() == 1 && paths[0].is_file();
    let output = if cli.json {
        Output::Json
    } else if cli.files_with_matches {
        Output::Files
    } else if cli.count {
        Output::Count
    } else {
        Output::Lines
    };
    let opts = Options {
        pattern: Pattern {
            pattern: cli.pattern.clone(),
            fixed: cli.fixed_strings,
            ignore_case: cli.ignore_case,
            smart_case: cli.smart_case,
            word: cli.word_regexp,
        },
        output,
        max_count: cli.max_count,
        before: cli.before.or(cli.context).unwrap_or(0),
        after: cli.after.or(cli.context).unwrap_or(0),
        line_number: !cli.no_line_number && (cli.line_number || tty),
        with_path: !one_file,
        heading: tty && !one_file,
        color: match cli.color {
            When::Always => true,
            When::Never => false,
            When::Auto => tty,
        },
    };
    let filters = Filters {
        globs: cli.globs.clone(),
        types: cli.types.clone(),
    };
    let (files, walk_errors) = search::walk(&paths, &filters)?;
    let outcome = search::search(&files, &opts)?;
    // Errors as rg prints them (`path: reason`), after the results; any
    // error makes the status 2, as in rg.
    for e in walk_errors.iter().chain(&outcome.errors) {
        eprintln!("{e}");
    }
    if !walk_errors.is_empty() || !outcome.errors.is_empty() {
        return Err(Failed);
    }
    Ok(outcome.matched)
}
