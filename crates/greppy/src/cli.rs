//! The command line, with ripgrep's flags and defaults. A search asks the
//! daemon (starting one if none runs) and prints what it finds with rg's
//! printer; without a daemon or an index it scans, and says so.

use crate::client::{self, Client};
use crate::daemon;
use crate::flags::{Cli, When};
use crate::full;
use crate::index::Regions;
use crate::protocol::{Print, Response, RootInfo, SearchQuery};
use crate::search::{self, Filters, Options, Output, Pattern};
use crate::store::{self, Store};
use clap::{Parser, Subcommand};
use std::io::{IsTerminal, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

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
    // rg's config file goes first, so that the command line wins.
    if !args.iter().skip(1).any(|a| a == "--no-config") {
        let config = crate::flags::config_args(full::prefix());
        args.splice(1..1, config);
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(mut c) => match c.resolve() {
            Ok(()) => c,
            Err(e) => {
                eprintln!("{}: {e}", full::prefix());
                return 2;
            }
        },
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    if let Some(sep) = &cli.path_separator
        && check_path_separator(sep).is_err()
    {
        return 2;
    }
    if full::needed(&cli) {
        let candidates = full_candidates(&cli);
        return full::run(&cli, candidates);
    }
    match run(&cli) {
        Ok(found) => i32::from(!found),
        Err(Failed) => 2,
    }
}

/// `--path-separator`: rg's error for one that is not one byte. (`/` is
/// the one the index's printing uses; [`full`] prints any other.)
fn check_path_separator(sep: &str) -> Result<(), Failed> {
    let bytes = sep.len();
    if bytes != 1 {
        eprintln!(
            "{}: error parsing flag --path-separator: A path separator must be exactly one \
             byte, but the given separator is {bytes} bytes: {sep}\n\
             In some shells on Windows '/' is automatically expanded. Use '//' instead.",
            full::prefix()
        );
        return Err(Failed);
    }
    Ok(())
}

/// A note about how a search was answered (the daemon started, a scan
/// instead of the index), on stderr; none when installed as `rg`, whose
/// callers read its stderr as rg's.
fn note(message: impl std::fmt::Display) {
    if full::prefix() != "rg" {
        eprintln!("greppy: {message}");
    }
}

/// The index's candidates for a search [`full`] runs, where its flags
/// leave them as they are and the paths are indexed folders; `None` for a
/// walk. Starts the daemon if none runs (this search then walks).
fn full_candidates(cli: &Cli) -> Option<full::Candidates> {
    let no_daemon = cli.no_daemon || std::env::var_os("GREPPY_NO_DAEMON").is_some_and(|v| v != "0");
    if no_daemon || full::scans_always(cli) || cli.files || cli.paths.is_empty() {
        return None;
    }
    if !cli.paths.iter().all(|p| p.as_os_str() != "-" && p.is_dir()) {
        return None;
    }
    let client = connect_or_start(|| Ok(())).ok().flatten()?;
    let filters = cli.filters();
    from_daemon(client, cli, &cli.paths, &filters, false)?.ok()
}

/// A pipelined connection to the daemon; `None` if none answers. With no
/// daemon, one is started for the next search (after `before_start`, whose
/// error stops this one) and this search scans, which [`note`] says.
fn connect_or_start(
    before_start: impl FnOnce() -> Result<(), Failed>,
) -> Result<Option<Client>, Failed> {
    match Client::connect_pipelined(&daemon::socket_path()) {
        Ok(c) => Ok(Some(c)),
        Err(client::Error::NoDaemon(..)) => {
            before_start()?;
            match crate::ask::spawn_daemon(false) {
                Ok(()) => note("started the daemon; this answer comes from a scan"),
                Err(e) => note(format_args!("could not start the daemon ({e:#}); scanning")),
            }
            Ok(None)
        }
        Err(_) => Ok(None),
    }
}

/// The search could not be done, or some files could not be searched; the
/// errors are printed already.
#[derive(Debug)]
struct Failed;

impl From<anyhow::Error> for Failed {
    fn from(e: anyhow::Error) -> Self {
        eprintln!("{}: {e:#}", full::prefix());
        Failed
    }
}

fn run(cli: &Cli) -> Result<bool, Failed> {
    // `-m 0` can match nothing: rg reads nothing (and the daemon's
    // protocol takes 0 for no limit).
    if cli.max_count == Some(0) {
        return Ok(false);
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
            When::Always | When::Ansi => true,
            When::Never => false,
            When::Auto => tty,
        },
        limit: cli.limit,
        gone_ok: false,
        invert: cli.invert_match,
        only_matching: cli.only_matching,
    };
    let filters = cli.filters();
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
        connect_or_start(|| {
            matcher = Some(opts.pattern.matcher()?);
            Ok(())
        })?
    };
    // One folder, printed as rg prints file by file: the daemon searches
    // and prints, and nothing is read here.
    let printable = paths.len() == 1 && opts.limit.is_none() && output != Output::Json;
    if let Some(c) = client.as_mut().filter(|_| printable) {
        match printed_by_daemon(c, cli, &paths[0], default_path, &filters, &opts)? {
            Some(found) => return nothing_searched(found, default_path, &paths, &filters),
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
    nothing_searched(outcome.matched, default_path, &paths, &filters)
}

/// rg's error when the search of the current folder (no path given) read
/// no file at all: filters left none. After a search that found nothing,
/// a walk to the first file tells.
fn nothing_searched(
    found: bool,
    default_path: bool,
    paths: &[PathBuf],
    filters: &Filters,
) -> Result<bool, Failed> {
    if found || !default_path || search::any_file(paths, filters) {
        return Ok(found);
    }
    eprintln!(
        "{}: No files were searched, which means ripgrep probably applied a filter you \
         didn't expect.\nRunning with --debug will show why files are being skipped.",
        full::prefix()
    );
    Err(Failed)
}

/// `--files`: the files a search of `paths` would read, named as rg names
/// them, in path order (rg's own order is its walk's, which varies), by
/// the walk rg's rules make; whether there was one. A closed pipe ends
/// the list quietly.
fn list_files(cli: &Cli, paths: &[PathBuf], default_path: bool) -> Result<bool, Failed> {
    let filters = cli.filters();
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
            // The walk flags that the daemon could not answer for are rg's
            // walk's to apply ([`full::run`] walks).
            Some(_) if full::widens(cli) => return None,
            Some(reason) => {
                if let Some(r) = reason {
                    note(format_args!("{r}; this answer comes from a scan"));
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
                    note(n);
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
        hidden: cli.hidden,
        follow: cli.rg.follow,
        no_ignore_parent: cli.rg.no_ignore_parent,
        no_ignore_global: cli.rg.no_ignore_global,
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
                self::note(n);
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
                note(format_args!("{r}; this answer comes from a scan"));
            }
            Ok(None)
        }
        Err(_) if closed => Ok(Some(true)),
        Err(client::Error::Version(m)) => {
            // A daemon left running across an upgrade: replaced by this
            // greppy's own.
            let replaced = client.stop_daemon(std::time::Duration::from_secs(2))
                && crate::ask::spawn_daemon(false).is_ok();
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

fn admin(cmd: Command) -> i32 {
    match admin_inner(cmd) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("greppy: {e:#}");
            2
        }
    }
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
                    crate::ask::spawn_daemon(true)?;
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
            let info = crate::ask::connect()?.index(&path)?;
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
            let hits = crate::ask::find(&query, &dir, limit, no_daemon, |n| note(n))?;
            let mut out = std::io::stdout().lock();
            for h in &hits {
                // Named as rg names files: below the folder as given, with
                // no `./` when none was given.
                let shown = match &given {
                    Some(_) => h.path.clone(),
                    None => h.path.strip_prefix(".").unwrap_or(&h.path).to_path_buf(),
                };
                crate::ask::print_hit(&mut out, &shown, h, lines, json)?;
            }
            Ok(if hits.is_empty() { 1 } else { 0 })
        }
        Command::Forget { path } => {
            crate::ask::connect()?.forget(&path)?;
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
