//! The command line, with ripgrep's flags and defaults. A search asks the
//! daemon (starting one if none runs) and prints what it finds with rg's
//! printer; without a daemon or an index it scans, and says so.

use crate::client::{self, Client};
use crate::daemon;
use crate::index::Regions;
use crate::protocol::{Print, Response, RootInfo, SearchQuery};
use crate::search::{self, Filters, Options, Output, Pattern};
use crate::store::{self, Store};
use clap::{Parser, Subcommand};
use std::io::{BufRead, IsTerminal, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// Search code like ripgrep: `greppy PATTERN [PATH...]`.
///
/// The output, the files searched (.gitignore, hidden files, binary files)
/// and the exit status are rg's: 0 if something was found, 1 if nothing
/// was, 2 on an error. Searches are answered by a daemon from an index it
/// keeps fresh; the first search in a tree starts one and scans.
#[derive(Debug, Parser)]
#[command(
    name = "greppy",
    version,
    max_term_width = 100,
    after_help = "Other commands (`greppy COMMAND --help`):\n  \
        search PATTERN [PATH...]   the same as `greppy PATTERN [PATH...]`\n  \
        find QUERY [PATH]          ranked search: definitions and spans for words or a question\n  \
        index [PATH]               index the tree holding PATH now (again)\n  \
        status                     the indexed trees, their size and freshness\n  \
        forget PATH                stop keeping the tree holding PATH\n  \
        daemon start|stop|run      the daemon (`run` stays in the foreground)\n  \
        mcp                        a Model Context Protocol server on stdio"
)]
pub struct Cli {
    /// A regular expression (rg's syntax), or a literal string with -F.
    /// With -e or --files there is none: the first word is a path.
    #[arg(required_unless_present_any = ["regexps", "files"])]
    pub pattern: Option<String>,
    /// Files and folders to search [default: the current folder].
    pub paths: Vec<PathBuf>,
    /// A pattern; repeatable: a line that matches any of them matches.
    #[arg(
        short = 'e',
        long = "regexp",
        value_name = "PATTERN",
        allow_hyphen_values = true
    )]
    pub regexps: Vec<String>,
    /// The pattern is a literal string, not a regular expression.
    #[arg(short = 'F', long)]
    pub fixed_strings: bool,
    /// Ignore case.
    #[arg(short = 'i', long, overrides_with_all = ["smart_case", "case_sensitive"])]
    pub ignore_case: bool,
    /// Ignore case unless the pattern has an uppercase letter.
    #[arg(short = 'S', long, overrides_with_all = ["ignore_case", "case_sensitive"])]
    pub smart_case: bool,
    /// Case matters (the default; undoes an earlier -i or -S).
    #[arg(short = 's', long, overrides_with_all = ["ignore_case", "smart_case"])]
    pub case_sensitive: bool,
    /// Only whole words.
    #[arg(short = 'w', long)]
    pub word_regexp: bool,
    /// Print the files that would be searched, with no pattern.
    #[arg(long)]
    pub files: bool,
    /// The order of files: `path` (greppy's own order always) or `none`.
    #[arg(long, value_enum, value_name = "SORTBY")]
    pub sort: Option<SortBy>,
    /// Only whole lines (wins over -w).
    #[arg(short = 'x', long)]
    pub line_regexp: bool,
    /// Print the lines that do not match (scans: the index cannot narrow it).
    #[arg(short = 'v', long)]
    pub invert_match: bool,
    /// A match may span lines (scans).
    #[arg(short = 'U', long)]
    pub multiline: bool,
    /// Search hidden files and folders too (scans: the index keeps rg's
    /// default walk).
    #[arg(short = '.', long)]
    pub hidden: bool,
    /// Only files matching the glob (`!GLOB` excludes); repeatable.
    #[arg(short = 'g', long = "glob", value_name = "GLOB")]
    pub globs: Vec<String>,
    /// Only files of this type (rg's names: rust, py, go, …); repeatable.
    #[arg(short = 't', long = "type", value_name = "TYPE")]
    pub types: Vec<String>,
    /// Print only the paths of files with a match.
    #[arg(short = 'l', long)]
    pub files_with_matches: bool,
    /// Print the number of matching lines per file (of matches, with -o).
    #[arg(short = 'c', long)]
    pub count: bool,
    /// Print the number of matches per file.
    #[arg(long)]
    pub count_matches: bool,
    /// Print each match on a line of its own, not the whole line.
    #[arg(short = 'o', long)]
    pub only_matching: bool,
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
    /// At most N matching lines in all.
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
    /// Scan, without asking the daemon (also: GREPPY_NO_DAEMON=1).
    #[arg(long)]
    pub no_daemon: bool,
    /// Descend at most NUM folders below each path given (0: only the
    /// paths themselves). Scans: the index does not keep depths.
    #[arg(
        short = 'd',
        long = "max-depth",
        alias = "maxdepth",
        value_name = "NUM"
    )]
    pub max_depth: Option<usize>,
    /// Read files through memory maps (rg's hint: the output is the same
    /// either way; greppy chooses for itself).
    #[arg(long, overrides_with = "no_mmap")]
    pub mmap: bool,
    /// Never read files through memory maps (a hint, as for rg).
    #[arg(long, overrides_with = "mmap")]
    pub no_mmap: bool,
    /// rg's number of search threads (a hint: the output is the same; the
    /// daemon and the scan size their own pools).
    #[arg(short = 'j', long, value_name = "NUM")]
    pub threads: Option<usize>,
    /// The separator printed between a path's parts: one byte. Only `/`,
    /// this system's own, is taken for now (rg's callers pass it to be
    /// sure of it); another is refused rather than ignored.
    #[arg(long, value_name = "SEPARATOR")]
    pub path_separator: Option<String>,
}

/// `--sort`: the orders greppy has. Files are always printed in path
/// order, which is rg's `--sort path`; rg's other keys (times) are not
/// offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SortBy {
    Path,
    None,
}

/// `greppy index|status|forget|daemon`.
#[derive(Debug, Parser)]
#[command(name = "greppy", version, max_term_width = 100)]
pub struct Admin {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Ranked search for a concept or a symbol ("where is the retry policy
    /// set"): spans of lines with a score, definitions first.
    Find {
        /// Words, identifiers or a question.
        query: String,
        /// The folder to search [default: the current folder].
        path: Option<PathBuf>,
        /// At most N hits.
        #[arg(long, short = 'n', value_name = "N", default_value_t = 10)]
        limit: u64,
        /// Lines of each span to print under its heading (0: headings only).
        #[arg(long, value_name = "N", default_value_t = 4)]
        lines: usize,
        /// One JSON object per hit: path, start, end, score, kind, name.
        #[arg(long)]
        json: bool,
        /// Index in memory for this answer, without asking the daemon (also:
        /// GREPPY_NO_DAEMON=1).
        #[arg(long)]
        no_daemon: bool,
    },
    /// Index the tree holding PATH (its git work tree, else PATH) now, or
    /// again, and wait until it is done.
    Index {
        /// [default: the current folder]
        path: Option<PathBuf>,
    },
    /// The indexed trees: files, bytes, index size, last update, freshness.
    Status {
        /// As JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stop keeping the tree holding PATH, and delete its index.
    Forget { path: PathBuf },
    /// A Model Context Protocol server on stdio, with the tools `search`,
    /// `find` and `read`.
    Mcp,
    /// Start, stop or run the daemon.
    Daemon {
        #[command(subcommand)]
        action: DaemonAction,
    },
}

#[derive(Debug, Clone, Copy, Subcommand)]
pub enum DaemonAction {
    /// Start the daemon in the background (nothing to do if one runs).
    Start,
    /// Stop the daemon.
    Stop,
    /// Run the daemon in the foreground (for systemd and containers).
    Run,
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
    } else if args.get(1).is_some_and(|a| {
        ["find", "index", "status", "forget", "daemon", "mcp"]
            .iter()
            .any(|c| a == *c)
    }) {
        return match Admin::try_parse_from(args) {
            Ok(a) => admin(a.command),
            Err(e) => {
                let _ = e.print();
                if e.use_stderr() { 2 } else { 0 }
            }
        };
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(mut c) => {
            c.resolve();
            c
        }
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

impl Cli {
    /// Folds `-e` and `-x` into the one pattern the search runs, as rg
    /// does: the patterns as alternatives (each escaped first with `-F`),
    /// and a whole line around them. With `-e`, the first word is a path.
    fn resolve(&mut self) {
        let mut patterns = std::mem::take(&mut self.regexps);
        if self.files {
            // No pattern: every word is a path.
            patterns.clear();
            if let Some(first) = self.pattern.take() {
                self.paths.insert(0, PathBuf::from(first));
            }
            return;
        }
        if patterns.is_empty() {
            patterns.extend(self.pattern.take());
        } else if let Some(first) = self.pattern.take() {
            self.paths.insert(0, PathBuf::from(first));
        }
        let escape = self.fixed_strings && (patterns.len() > 1 || self.line_regexp);
        let mut pattern = match patterns.len() {
            1 if !escape => patterns.pop().unwrap_or_default(),
            _ => patterns
                .iter()
                .map(|p| {
                    if escape {
                        format!("(?:{})", regex_syntax::escape(p))
                    } else {
                        format!("(?:{p})")
                    }
                })
                .collect::<Vec<_>>()
                .join("|"),
        };
        if escape {
            self.fixed_strings = false;
        }
        if self.line_regexp {
            pattern = format!("(?m:^)(?:{pattern})(?m:$)");
            self.word_regexp = false;
        }
        self.pattern = Some(pattern);
    }

    /// The pattern the search runs ([`Cli::resolve`]).
    fn pattern(&self) -> String {
        self.pattern.clone().unwrap_or_default()
    }
}

/// `--path-separator`: rg's error for one that is not one byte; `/`, the
/// separator paths are printed with anyway, is the only one taken.
fn check_path_separator(sep: &str) -> Result<(), Failed> {
    let bytes = sep.len();
    if bytes != 1 {
        eprintln!(
            "rg: error parsing flag --path-separator: A path separator must be exactly one \
             byte, but the given separator is {bytes} bytes: {sep}\n\
             In some shells on Windows '/' is automatically expanded. Use '//' instead."
        );
        return Err(Failed);
    }
    if sep != "/" {
        eprintln!("greppy: --path-separator {sep}: only / is supported yet");
        return Err(Failed);
    }
    Ok(())
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
    if let Some(sep) = &cli.path_separator {
        check_path_separator(sep)?;
    }
    let tty = std::io::stdout().is_terminal();
    // With no path rg searches `./` and names files without the `./`.
    let default_path = cli.paths.is_empty();
    let paths = if default_path {
        vec![PathBuf::from("./")]
    } else {
        cli.paths.clone()
    };
    if cli.files {
        return list_files(cli, &paths, default_path);
    }
    // rg leaves the path out when it searches one named file.
    let one_file = paths.len() == 1 && paths[0].is_file();
    let output = if cli.json {
        Output::Json
    } else if cli.files_with_matches {
        Output::Files
    } else if cli.count_matches || (cli.count && cli.only_matching) {
        // rg counts matches for `-c -o`, as for `--count-matches`.
        Output::CountMatches
    } else if cli.count {
        Output::Count
    } else {
        Output::Lines
    };
    let mut opts = Options {
        pattern: Pattern {
            pattern: cli.pattern(),
            fixed: cli.fixed_strings,
            ignore_case: cli.ignore_case,
            smart_case: cli.smart_case,
            word: cli.word_regexp,
            multiline: cli.multiline,
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
        limit: cli.limit,
        gone_ok: false,
        invert: cli.invert_match,
        only_matching: cli.only_matching,
    };
    let filters = Filters {
        globs: cli.globs.clone(),
        types: cli.types.clone(),
        hidden: cli.hidden,
        max_depth: cli.max_depth,
    };
    // What the index cannot narrow is scanned here, as rg scans it.
    let scans = cli.invert_match || cli.multiline || cli.hidden || cli.max_depth.is_some();
    let no_daemon =
        scans || cli.no_daemon || std::env::var_os("GREPPY_NO_DAEMON").is_some_and(|v| v != "0");
    // A bad pattern is reported before anything else, as rg does; the
    // matcher is built here only where this process searches.
    let mut matcher = None;
    // Named files are read directly; the index is for trees.
    let mut client = if no_daemon || !paths.iter().all(|p| p.is_dir()) {
        None
    } else {
        match Client::connect_pipelined(&daemon::socket_path()) {
            Ok(c) => Some(c),
            Err(client::Error::NoDaemon(..)) => {
                matcher = Some(opts.pattern.matcher()?);
                match spawn_daemon(false) {
                    Ok(()) => {
                        eprintln!("greppy: started the daemon; this answer comes from a scan");
                    }
                    Err(e) => eprintln!("greppy: could not start the daemon ({e:#}); scanning"),
                }
                None
            }
            Err(_) => None,
        }
    };
    // One folder, printed as rg prints file by file: the daemon searches
    // and prints, and nothing is read here.
    let printable = paths.len() == 1 && opts.limit.is_none() && output != Output::Json;
    if let Some(c) = client.as_mut().filter(|_| printable) {
        match printed_by_daemon(c, cli, &paths[0], default_path, &filters, &opts)? {
            Some(found) => return Ok(found),
            // A scan answers (or, the daemon refusing the search, it
            // reports the error).
            None => client = None,
        }
    }
    let matcher = match matcher {
        Some(m) => m,
        None => opts.pattern.matcher()?,
    };
    let regions = search::regions_suffice(&opts);
    let (mut files, walk_errors) =
        match client.and_then(|c| from_daemon(c, cli, &paths, &filters, regions)) {
            Some(r) => {
                // The index's files, unread by the daemon: one deleted since
                // is not an error.
                opts.gone_ok = true;
                r?
            }
            None => {
                let (f, e) = search::walk(&paths, &filters)?;
                (f.into_iter().map(|f| (f, None)).collect(), e)
            }
        };
    if default_path {
        for (f, _) in &mut files {
            if let Ok(rest) = f.strip_prefix("./") {
                *f = rest.to_path_buf();
            }
        }
    }
    let outcome = search::search(&files, &matcher, &opts)?;
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

/// `--files`: the files a search of `paths` would read, named as rg names
/// them, in path order (rg's own order is its walk's, which varies), by
/// the walk rg's rules make; whether there was one. A closed pipe ends
/// the list quietly.
fn list_files(cli: &Cli, paths: &[PathBuf], default_path: bool) -> Result<bool, Failed> {
    let filters = Filters {
        globs: cli.globs.clone(),
        types: cli.types.clone(),
        hidden: cli.hidden,
        max_depth: cli.max_depth,
    };
    let (files, errors) = search::walk(paths, &filters)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for f in &files {
        let shown = match f.strip_prefix("./") {
            Ok(rest) if default_path => rest,
            _ => f.as_path(),
        };
        let wrote = out
            .write_all(shown.as_os_str().as_bytes())
            .and_then(|()| out.write_all(b"\n"));
        if wrote.is_err() {
            return Ok(true);
        }
    }
    if out.flush().is_err() {
        return Ok(true);
    }
    for e in &errors {
        eprintln!("{e}");
    }
    if !errors.is_empty() {
        return Err(Failed);
    }
    Ok(!files.is_empty())
}

/// Files, each with the only parts of it that may match, if known.
type Parts = Vec<(PathBuf, Option<Regions>)>;

/// The files under `paths` that may match (with the parts of them that
/// may, if `regions` and the index knows) and the walk's errors, from the
/// daemon on `client`; `None` if it cannot answer (then the caller scans).
/// Paths the index cannot answer for are scanned here.
fn from_daemon(
    mut client: Client,
    cli: &Cli,
    paths: &[PathBuf],
    filters: &Filters,
    regions: bool,
) -> Option<anyhow::Result<(Parts, Vec<String>)>> {
    let cwd = std::env::current_dir().ok()?;
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for p in paths {
        let abs = p.canonicalize().ok()?;
        let query = SearchQuery {
            files: true,
            // The files are searched here, with rg's printer: the daemon
            // need not read them first.
            candidates: true,
            regions,
            ..query_for(cli, p, &abs, &cwd, filters)
        };
        let answer = match client.search(query) {
            Ok(a) => a,
            // A busy or broken daemon: the scan still answers.
            Err(_) => return None,
        };
        match answer.scan {
            Some(reason) => {
                if let Some(r) = reason {
                    eprintln!("greppy: {r}; this answer comes from a scan");
                }
                let (f, e) = match search::walk(std::slice::from_ref(p), filters) {
                    Ok(r) => r,
                    Err(e) => return Some(Err(e)),
                };
                files.extend(f.into_iter().map(|f| (f, None)));
                errors.extend(e);
            }
            None => {
                if let Some(n) = &answer.note {
                    eprintln!("greppy: {n}");
                }
                files.extend(
                    answer
                        .files
                        .into_iter()
                        .map(|f| PathBuf::from(std::ffi::OsString::from_vec(f)))
                        .zip(answer.regions),
                );
                errors.extend(answer.errors);
            }
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files.dedup_by(|a, b| a.0 == b.0);
    Some(Ok((files, errors)))
}

/// The search the command line asks for in the folder `path` (`abs`,
/// canonical), run from `cwd`.
fn query_for(cli: &Cli, path: &Path, abs: &Path, cwd: &Path, filters: &Filters) -> SearchQuery {
    SearchQuery {
        pattern: cli.pattern(),
        path: abs.as_os_str().as_bytes().to_vec(),
        display: path.as_os_str().as_bytes().to_vec(),
        cwd: cwd.as_os_str().as_bytes().to_vec(),
        fixed: cli.fixed_strings,
        ignore_case: cli.ignore_case,
        smart_case: cli.smart_case,
        word: cli.word_regexp,
        globs: filters.globs.clone(),
        types: filters.types.clone(),
        ..SearchQuery::default()
    }
}

/// Asks the daemon on `client` to search `path` and print what rg would;
/// writes it to stdout as it comes. Whether anything matched, or `None` if
/// the daemon cannot answer (a scan then does, and reports a bad pattern):
/// the tree is not indexed, or the daemon is busy or broken before it
/// answered anything.
fn printed_by_daemon(
    client: &mut Client,
    cli: &Cli,
    path: &Path,
    bare: bool,
    filters: &Filters,
    opts: &Options,
) -> Result<Option<bool>, Failed> {
    let (Ok(cwd), Ok(abs)) = (std::env::current_dir(), path.canonicalize()) else {
        return Ok(None);
    };
    let query = SearchQuery {
        print: Some(Print {
            output: match opts.output {
                Output::Files => "files",
                Output::Count => "count",
                Output::CountMatches => "count-matches",
                _ => "lines",
            }
            .to_string(),
            only_matching: opts.only_matching,
            max_count: opts.max_count.unwrap_or(0),
            before: opts.before as u64,
            after: opts.after as u64,
            line_number: opts.line_number,
            with_path: opts.with_path,
            heading: opts.heading,
            color: opts.color,
            bare,
        }),
        ..query_for(cli, path, &abs, &cwd, filters)
    };
    let mut out = std::io::stdout().lock();
    let (mut wrote, mut closed) = (false, false);
    let end = client.search_each(query, |r| {
        if let Response::Printed { bytes, .. } = r {
            wrote = true;
            // A closed pipe (`greppy x | head`) ends the search quietly.
            closed = out.write_all(&bytes).is_err();
        }
        !closed
    });
    match end {
        Ok(Response::Done {
            matches,
            errors,
            note,
            ..
        }) => {
            let _ = out.flush();
            if let Some(n) = note {
                eprintln!("greppy: {n}");
            }
            // Errors as rg prints them (`path: reason`), after the
            // results; any error makes the status 2, as in rg.
            for e in &errors {
                eprintln!("{e}");
            }
            if errors.is_empty() {
                Ok(Some(matches > 0))
            } else {
                Err(Failed)
            }
        }
        Ok(Response::Scan { reason, .. }) if !wrote => {
            if let Some(r) = reason {
                eprintln!("greppy: {r}; this answer comes from a scan");
            }
            Ok(None)
        }
        Err(_) if closed => Ok(Some(true)),
        Err(client::Error::Version(m)) => {
            // A daemon left running across an upgrade: replaced by this
            // greppy's own.
            let replaced = client.stop_daemon(std::time::Duration::from_secs(2))
                && spawn_daemon(false).is_ok();
            let done = if replaced {
                "it was stopped and a new one started"
            } else {
                "it could not be replaced (greppy daemon stop, then search again)"
            };
            eprintln!(
                "greppy: the daemon is another version ({m}); {done}; this answer comes from a scan"
            );
            Ok(None)
        }
        Err(_) if !wrote => Ok(None),
        Ok(other) => Err(anyhow::anyhow!("the daemon answered {other:?}").into()),
        Err(e) => Err(anyhow::anyhow!("the daemon stopped answering: {e}").into()),
    }
}

/// Starts `greppy daemon run` in its own session, its errors logged beside
/// the socket. With `wait`, returns once its socket answers (it says so on
/// its output), or with its error.
fn spawn_daemon(wait: bool) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let socket = daemon::socket_path();
    let dir = socket.parent().unwrap_or(Path::new("/tmp"));
    daemon::make_private_dir(dir)?;
    let log_path = dir.join("daemon.log");
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .with_context(|| format!("open {}", log_path.display()))?;
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.args(["daemon", "run"])
        .stdin(Stdio::null())
        .stdout(if wait { Stdio::piped() } else { Stdio::null() })
        .stderr(log);
    // SAFETY: setsid is async-signal-safe and touches no memory of ours; it
    // detaches the daemon from this terminal's signals and hangups.
    unsafe {
        cmd.pre_exec(|| rustix::process::setsid().map(drop).map_err(Into::into));
    }
    let mut child = cmd.spawn().context("start `greppy daemon run`")?;
    if wait {
        let out = child.stdout.take().context("the daemon's output")?;
        let mut line = String::new();
        std::io::BufReader::new(out).read_line(&mut line)?;
        // One that another start began meanwhile answers: that is a start.
        if line.is_empty() && Client::connect(&socket).is_err() {
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            let last = log.lines().last().unwrap_or("no message");
            anyhow::bail!("the daemon did not start: {last}");
        }
    }
    Ok(())
}

fn admin(cmd: Command) -> i32 {
    match admin_inner(cmd) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("greppy: {e:#}");
            2
        }
    }
}

fn connect() -> anyhow::Result<Client> {
    let socket = daemon::socket_path();
    Ok(match Client::connect(&socket) {
        Err(client::Error::NoDaemon(..)) => {
            spawn_daemon(true)?;
            Client::connect(&socket)?
        }
        r => r?,
    })
}

fn admin_inner(cmd: Command) -> anyhow::Result<i32> {
    let socket = daemon::socket_path();
    match cmd {
        Command::Daemon {
            action: DaemonAction::Run,
        } => {
            let store = Store::new(store::default_dir())?;
            daemon::run(&socket, Some(store), || {
                println!(
                    "greppy daemon {} listening on {}",
                    env!("CARGO_PKG_VERSION"),
                    socket.display()
                );
                use std::io::Write;
                let _ = std::io::stdout().flush();
            })?;
            Ok(0)
        }
        Command::Daemon {
            action: DaemonAction::Start,
        } => {
            match Client::connect(&socket) {
                Ok(c) => println!("{} already answers on {}", c.server(), socket.display()),
                Err(_) => {
                    spawn_daemon(true)?;
                    println!("greppy daemon started on {}", socket.display());
                }
            }
            Ok(0)
        }
        Command::Daemon {
            action: DaemonAction::Stop,
        } => {
            match Client::connect(&socket) {
                Ok(mut c) => {
                    c.shutdown()?;
                    println!("greppy daemon stopped");
                }
                Err(client::Error::NoDaemon(..)) => println!("no greppy daemon runs"),
                Err(e) => return Err(e.into()),
            }
            Ok(0)
        }
        Command::Index { path } => {
            let path = path.unwrap_or_else(|| PathBuf::from("."));
            let started = std::time::Instant::now();
            let info = connect()?.index(&path)?;
            println!(
                "{}: {}, {}, index {} ({:.1} s)",
                show(&info.root),
                count_files(info.files),
                human(info.source_bytes),
                human(info.index_bytes),
                started.elapsed().as_secs_f64()
            );
            Ok(0)
        }
        Command::Mcp => {
            crate::mcp::run()?;
            Ok(0)
        }
        Command::Find {
            query,
            path,
            limit,
            lines,
            json,
            no_daemon,
        } => {
            let no_daemon =
                no_daemon || std::env::var_os("GREPPY_NO_DAEMON").is_some_and(|v| v != "0");
            let given = path.clone();
            let dir = path.unwrap_or_else(|| PathBuf::from("."));
            if !dir.is_dir() {
                anyhow::bail!("{}: not a folder", dir.display());
            }
            let hits = find(&query, &dir, limit, no_daemon)?;
            let mut out = std::io::stdout().lock();
            for h in &hits {
                // Named as rg names files: below the folder as given, with
                // no `./` when none was given.
                let shown = match &given {
                    Some(_) => h.path.clone(),
                    None => h.path.strip_prefix(".").unwrap_or(&h.path).to_path_buf(),
                };
                print_hit(&mut out, &shown, h, lines, json)?;
            }
            Ok(if hits.is_empty() { 1 } else { 0 })
        }
        Command::Forget { path } => {
            connect()?.forget(&path)?;
            Ok(0)
        }
        Command::Status { json } => {
            let roots = match Client::connect(&socket) {
                Ok(mut c) => c.status()?,
                Err(client::Error::NoDaemon(..)) => {
                    if !json {
                        println!("no greppy daemon runs");
                    }
                    Vec::new()
                }
                Err(e) => return Err(e.into()),
            };
            if json {
                let list: Vec<_> = roots.iter().map(status_json).collect();
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else {
                for r in &roots {
                    println!("{}", status_line(r));
                }
            }
            Ok(0)
        }
    }
}

/// The hits of a ranked search of `dir`, named below `dir` as given: from
/// the daemon (started if none runs), or from an index made in memory.
pub fn find(
    query: &str,
    dir: &Path,
    limit: u64,
    no_daemon: bool,
) -> anyhow::Result<Vec<crate::rank::Hit>> {
    let abs = dir.canonicalize()?;
    let rename = |mut hits: Vec<crate::rank::Hit>| {
        for h in &mut hits {
            if let Ok(rel) = h.path.strip_prefix(&abs) {
                h.path = dir.join(rel);
            }
        }
        hits
    };
    let local = || -> anyhow::Result<Vec<crate::rank::Hit>> {
        let n = if limit == 0 { 10 } else { limit as usize };
        Ok(rename(crate::rank::find_in_walk(&abs, query, n)?))
    };
    if no_daemon {
        return local();
    }
    let mut client = match connect() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("greppy: no daemon ({e:#}); indexing in memory for this answer");
            return local();
        }
    };
    let found = client.find(crate::protocol::FindQuery {
        query: query.to_string(),
        path: abs.as_os_str().as_bytes().to_vec(),
        display: dir.as_os_str().as_bytes().to_vec(),
        limit,
        wait_ms: 0,
    })?;
    if let Some(n) = &found.note {
        eprintln!("greppy: {n}");
    }
    Ok(found.hits)
}

/// One hit: a heading (`path:start-end kind name [score]`), then up to
/// `lines` lines of its span; or one JSON object.
pub fn print_hit(
    out: &mut impl std::io::Write,
    shown: &Path,
    h: &crate::rank::Hit,
    lines: usize,
    json: bool,
) -> anyhow::Result<()> {
    if json {
        let v = serde_json::json!({
            "path": shown.to_string_lossy(),
            "start": h.start,
            "end": h.end,
            "score": h.score,
            "kind": h.kind,
            "name": h.name,
        });
        writeln!(out, "{v}")?;
        return Ok(());
    }
    let name = if h.name.is_empty() {
        String::new()
    } else {
        format!(" {}", h.name)
    };
    writeln!(
        out,
        "{}:{}-{} {}{name} [{:.2}]",
        shown.display(),
        h.start,
        h.end,
        h.kind,
        h.score
    )?;
    if lines > 0 {
        let text = std::fs::read(&h.path).unwrap_or_default();
        let text = String::from_utf8_lossy(&text);
        let span = (h.end - h.start + 1) as usize;
        for (i, l) in text
            .lines()
            .enumerate()
            .skip(h.start.saturating_sub(1) as usize)
            .take(span.min(lines))
        {
            writeln!(out, "{:>6}  {l}", i + 1)?;
        }
        if span > lines {
            writeln!(out, "        …")?;
        }
        writeln!(out)?;
    }
    Ok(())
}

fn show(path: &[u8]) -> String {
    String::from_utf8_lossy(path).into_owned()
}

/// `1 file`, `2 files`.
fn count_files(n: u64) -> String {
    if n == 1 {
        "1 file".to_string()
    } else {
        format!("{n} files")
    }
}

fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

fn status_json(r: &RootInfo) -> serde_json::Value {
    serde_json::json!({
        "root": show(&r.root),
        "phase": r.phase,
        "files": r.files,
        "source_bytes": r.source_bytes,
        "index_bytes": r.index_bytes,
        "changes": r.changes,
        "updated_ms": r.updated_ms,
        "fresh": r.fresh,
        "error": r.error,
    })
}

fn status_line(r: &RootInfo) -> String {
    let now_ms = crate::index::now_ns() / 1_000_000;
    let ago = now_ms.saturating_sub(r.updated_ms) / 1000;
    let state = if r.fresh {
        "fresh".to_string()
    } else if r.phase == "watching" {
        "stale (changes pending)".to_string()
    } else {
        format!("stale ({})", r.phase.replace('_', " "))
    };
    let mut line = format!(
        "{}\n  {}, {}, index {}, updated {ago} s ago, {state}",
        show(&r.root),
        count_files(r.files),
        human(r.source_bytes),
        human(r.index_bytes)
    );
    if let Some(e) = &r.error {
        line.push_str(&format!("\n  {e}"));
    }
    line
}
