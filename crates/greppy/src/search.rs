//! Exact search, as ripgrep does it: the same walk (the `ignore` crate:
//! `.gitignore`, hidden files), the same matcher (`grep-regex`), the same
//! line handling and binary detection (`grep-searcher`) and the same output
//! (`grep-printer`), so that results equal rg's byte for byte. Files are
//! searched in parallel and printed in path order.

use crate::index::{Index, Region, Regions};
use anyhow::{Context, Result};
use grep_printer::{ColorSpecs, JSONBuilder, StandardBuilder, Stats, SummaryBuilder, SummaryKind};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use rayon::prelude::*;
use std::io::Write;
use std::ops::Range;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use termcolor::Buffer;

/// What to look for, as rg's flags say it.
#[derive(Debug, Clone, Default)]
pub struct Pattern {
    pub pattern: String,
    /// `-F`: the pattern is a literal string.
    pub fixed: bool,
    /// `-i`
    pub ignore_case: bool,
    /// `-S`: case-insensitive unless the pattern has an uppercase letter.
    pub smart_case: bool,
    /// `-w`: only whole words.
    pub word: bool,
    /// `-U`: a match may span lines.
    pub multiline: bool,
}

impl Pattern {
    /// The matcher rg would build for these flags.
    pub fn matcher(&self) -> Result<RegexMatcher> {
        RegexMatcherBuilder::new()
            .fixed_strings(self.fixed)
            .case_insensitive(self.ignore_case)
            .case_smart(self.smart_case && !self.ignore_case)
            .word(self.word)
            // With `-U` as rg builds it: `^` and `$` at each line's ends,
            // and a match may span lines.
            .multi_line(self.multiline)
            .line_terminator((!self.multiline).then_some(b'\n'))
            // rg's binary detection stops at a NUL: a pattern that must
            // match one is refused, with rg's message.
            .ban_byte(Some(b'\x00'))
            .build(&self.pattern)
            .map_err(|e| anyhow::anyhow!(suggest(e.to_string())))
    }

    /// The index's plan for these flags ([`crate::plan::plan_pattern`]);
    /// `None` if the pattern does not parse. With `-S` it is planned as
    /// case-insensitive: the matcher may fold case (a pattern with no
    /// capital), and then `k` also matches the Kelvin sign, which has no
    /// `k` among its bytes. A plan that folds case lets through at least
    /// what one that does not would.
    pub fn plan(&self) -> Option<crate::plan::Query> {
        crate::plan::plan_pattern(
            &self.pattern,
            self.fixed,
            self.ignore_case || self.smart_case,
        )
    }
}

/// How results are printed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Output {
    /// `path:line:text` (line numbers and headings as rg decides them).
    #[default]
    Lines,
    /// `-l`: the paths of files with a match.
    Files,
    /// `-c`: `path:count` for files with a match.
    Count,
    /// `--count-matches` (or `-c -o`): `path:count` of the matches, not
    /// the lines.
    CountMatches,
    /// `--json`: rg's JSON Lines messages.
    Json,
}

/// Everything a search needs besides the files.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub pattern: Pattern,
    pub output: Output,
    /// `-m N`: at most N matching lines per file.
    pub max_count: Option<u64>,
    pub before: usize,
    pub after: usize,
    /// Line numbers (rg: on when printing to a terminal, or `-n`).
    pub line_number: bool,
    /// Paths before each line (rg: when searching more than one file).
    pub with_path: bool,
    /// Group lines under a heading per file (rg on a terminal).
    pub heading: bool,
    pub color: bool,
    /// `--limit N`: at most N matching lines in all (files are then
    /// searched one after another, in order).
    pub limit: Option<u64>,
    /// A file that is gone when it is read matches nothing, with no error:
    /// for files named by the daemon's index, which may be a moment behind
    /// the tree.
    pub gone_ok: bool,
    /// `-v`: the lines that do not match.
    pub invert: bool,
    /// `-o`: each match on a line of its own, not the lines.
    pub only_matching: bool,
}

/// The walk's filters (`-g`, `-t`).
#[derive(Debug, Clone, Default)]
pub struct Filters {
    /// `-g GLOB` (a leading `!` excludes).
    pub globs: Vec<String>,
    /// `-t TYPE` (rg's built-in type names).
    pub types: Vec<String>,
    /// `--hidden`: hidden files and folders too.
    pub hidden: bool,
    /// `--max-depth N`: no deeper than N folders below each path given.
    pub max_depth: Option<usize>,
}

/// rg's own ignore file, read beside `.ignore` (and over it).
pub const RGIGNORE: &str = ".rgignore";

/// rg's walk of `roots` with `filters`.
fn walk_builder(roots: &[PathBuf], filters: &Filters) -> Result<ignore::WalkBuilder> {
    let (first, rest) = roots.split_first().context("no path to search")?;
    let mut b = ignore::WalkBuilder::new(first);
    for r in rest {
        b.add(r);
    }
    b.add_custom_ignore_filename(RGIGNORE);
    b.hidden(!filters.hidden);
    b.max_depth(filters.max_depth);
    if !filters.globs.is_empty() {
        let mut o = ignore::overrides::OverrideBuilder::new(std::env::current_dir()?);
        for g in &filters.globs {
            o.add(g).with_context(|| format!("bad glob {g:?}"))?;
        }
        b.overrides(o.build()?);
    }
    if !filters.types.is_empty() {
        let mut t = ignore::types::TypesBuilder::new();
        t.add_defaults();
        for ty in &filters.types {
            t.select(ty);
        }
        b.types(t.build().context("unknown file type")?);
    }
    Ok(b)
}

/// Whether the walk of `roots` under `filters` has a file at all (it
/// stops at the first).
pub fn any_file(roots: &[PathBuf], filters: &Filters) -> bool {
    let Ok(b) = walk_builder(roots, filters) else {
        return true;
    };
    b.build()
        .flatten()
        .any(|e| e.file_type().is_some_and(|t| t.is_file()))
}

/// The files rg would search under `roots`, sorted by path. Errors (an
/// unreadable folder, a loop of links) are returned beside the files, as rg
/// reports them and goes on.
pub fn walk(roots: &[PathBuf], filters: &Filters) -> Result<(Vec<PathBuf>, Vec<String>)> {
    let b = walk_builder(roots, filters)?;
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for entry in b.build() {
        match entry {
            Ok(e) if e.file_type().is_some_and(|t| t.is_file()) => files.push(e.into_path()),
            Ok(_) => {}
            Err(e) => errors.push(walk_error(&e)),
        }
    }
    files.sort();
    Ok((files, errors))
}

/// What the walk of one tree found: the files rg would search (in path
/// order), every folder it went into, and the errors it met.
#[derive(Debug, Default)]
pub struct Tree {
    pub files: Vec<PathBuf>,
    pub dirs: rustc_hash::FxHashSet<PathBuf>,
    /// Each error: the path it is about, and rg's message.
    pub errors: Vec<(PathBuf, String)>,
    /// The symbolic links it met and did not follow (`--follow` would).
    pub links: Vec<PathBuf>,
    /// With hidden names: the folders named `.git` it did not go into.
    pub gits: Vec<PathBuf>,
}

/// Walks `root` as rg would with no filters, on the walker's threads as rg
/// does; errors come in path order.
pub fn walk_tree(root: &Path) -> Tree {
    walk_tree_with(root, false)
}

/// [`walk_tree`], and with `hidden` as `rg --hidden` walks, but for what
/// lies in folders named `.git`: those are listed in [`Tree::gits`], not
/// entered (a repository's own files churn with every git command, and an
/// editor's search leaves them out with `-g '!**/.git'`).
pub fn walk_tree_with(root: &Path, hidden: bool) -> Tree {
    enum Found {
        File(PathBuf),
        Dir(PathBuf),
        Link(PathBuf),
        Git(PathBuf),
        Error(PathBuf, String),
    }
    let (tx, rx) = std::sync::mpsc::channel();
    ignore::WalkBuilder::new(root)
        .add_custom_ignore_filename(RGIGNORE)
        .hidden(!hidden)
        .build_parallel()
        .run(|| {
            let tx = tx.clone();
            Box::new(move |entry| {
                let mut state = ignore::WalkState::Continue;
                let found = match entry {
                    Ok(e) => match e.file_type() {
                        Some(t) if t.is_file() => Some(Found::File(e.into_path())),
                        Some(t)
                            if hidden && t.is_dir() && e.depth() > 0 && e.file_name() == ".git" =>
                        {
                            state = ignore::WalkState::Skip;
                            Some(Found::Git(e.into_path()))
                        }
                        Some(t) if t.is_dir() => Some(Found::Dir(e.into_path())),
                        Some(t) if t.is_symlink() => Some(Found::Link(e.into_path())),
                        _ => None,
                    },
                    Err(e) => Some(Found::Error(error_path(&e), walk_error(&e))),
                };
                match found.map(|f| tx.send(f)) {
                    Some(Err(_)) => ignore::WalkState::Quit,
                    _ => state,
                }
            })
        });
    drop(tx);
    let mut tree = Tree::default();
    // What the tree keeps (its folders and errors) is copied on this
    // thread, so that the walker threads' memory is all freed once the
    // files are indexed: kept where the walkers made them, folders among
    // freed paths kept 2 MiB of a small tree's heap from being given back.
    let own = |p: PathBuf| p.as_path().to_path_buf();
    for f in rx {
        match f {
            Found::File(p) => tree.files.push(p),
            Found::Dir(p) => {
                tree.dirs.insert(own(p));
            }
            Found::Link(p) => tree.links.push(own(p)),
            Found::Git(p) => tree.gits.push(own(p)),
            Found::Error(p, e) => tree.errors.push((own(p), e.as_str().to_owned())),
        }
    }
    tree.files.sort();
    tree.errors.sort();
    tree.links.sort();
    tree.gits.sort();
    tree
}

/// What a walk takes from a folder: a file, a folder, or a link it does
/// not follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    File,
    Dir,
    Link,
}

/// The entries of the folder `dir` that a walk of a tree holding it would
/// take (ignore files; hidden names only with `hidden`).
pub fn walk_children(dir: &Path, hidden: bool) -> rustc_hash::FxHashMap<PathBuf, Entry> {
    ignore::WalkBuilder::new(dir)
        .add_custom_ignore_filename(RGIGNORE)
        .hidden(!hidden)
        .max_depth(Some(1))
        .build()
        .flatten()
        .filter(|e| e.depth() == 1)
        .filter_map(|e| {
            let t = e.file_type()?;
            let kind = if t.is_file() {
                Entry::File
            } else if t.is_dir() {
                Entry::Dir
            } else if t.is_symlink() {
                Entry::Link
            } else {
                return None;
            };
            Some((e.into_path(), kind))
        })
        .collect()
}

/// `-g` and `-t` applied to files one at a time, as the walk applies them,
/// for files a walk without them would search. Globs that let files in
/// (without `!`) can bring in files the unfiltered walk skips (rg then
/// searches ignored files that match them), so they cannot be applied this
/// way: [`FileFilter::new`] returns `None` for them.
#[derive(Debug)]
pub struct FileFilter {
    /// `None` when there are none (most searches: nothing is built).
    overrides: Option<ignore::overrides::Override>,
    types: Option<ignore::types::Types>,
}

impl FileFilter {
    /// The filter of `filters`, globs taken relative to `cwd`; `Ok(None)`
    /// if a glob lets files in.
    pub fn new(filters: &Filters, cwd: &Path) -> Result<Option<FileFilter>> {
        if filters.globs.iter().any(|g| !g.starts_with('!')) {
            return Ok(None);
        }
        let mut overrides = None;
        if !filters.globs.is_empty() {
            let mut o = ignore::overrides::OverrideBuilder::new(cwd);
            for g in &filters.globs {
                o.add(g).with_context(|| format!("bad glob {g:?}"))?;
            }
            overrides = Some(o.build()?);
        }
        let mut types = None;
        if !filters.types.is_empty() {
            let mut t = ignore::types::TypesBuilder::new();
            t.add_defaults();
            for ty in &filters.types {
                t.select(ty);
            }
            types = Some(t.build().context("unknown file type")?);
        }
        Ok(Some(FileFilter { overrides, types }))
    }

    /// Whether the walk from `top` leaves out the folder `dir` (or one it
    /// lies in), both as the walk names them.
    pub fn excludes_dir(&self, top: &Path, dir: &Path) -> bool {
        self.overrides.as_ref().is_some_and(|o| {
            dir.ancestors()
                .take_while(|d| *d != top && d.starts_with(top))
                .any(|d| o.matched(d, true).is_ignore())
        })
    }

    /// Whether the walk from `top` keeps `file` (both as the walk names
    /// them: `top` joined with the path below it).
    pub fn allows(&self, top: &Path, file: &Path) -> bool {
        if let Some(o) = &self.overrides {
            // A folder the globs exclude is not entered.
            let mut dirs = file
                .ancestors()
                .skip(1)
                .take_while(|d| *d != top && d.starts_with(top));
            if dirs.any(|d| o.matched(d, true).is_ignore()) {
                return false;
            }
            if o.matched(file, false).is_ignore() {
                return false;
            }
        }
        self.types
            .as_ref()
            .is_none_or(|t| !t.matched(file, false).is_ignore())
    }
}

/// The path a walk error is about.
fn error_path(e: &ignore::Error) -> PathBuf {
    match e {
        ignore::Error::WithPath { path, .. } => path.clone(),
        ignore::Error::Loop { child, .. } => child.clone(),
        ignore::Error::WithDepth { err, .. } => error_path(err),
        _ => PathBuf::new(),
    }
}

/// A walk error as rg words it: `path: reason`.
fn walk_error(e: &ignore::Error) -> String {
    match e {
        ignore::Error::WithPath { path, err } => match err.io_error() {
            Some(io) => {
                // The OS's words, under the layers the walk wraps them in.
                let mut inner: &dyn std::error::Error = io;
                while let Some(s) = inner.source() {
                    inner = s;
                }
                format!("{}: {inner}", path.display())
            }
            None => format!("{}: {err}", path.display()),
        },
        ignore::Error::WithDepth { err, .. } => walk_error(err),
        e => e.to_string(),
    }
}

pub fn searcher(opts: &Options) -> Searcher {
    SearcherBuilder::new()
        // rg stops reading a file it walked to at its first NUL byte.
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .line_number(opts.line_number || opts.output == Output::Json)
        .invert_match(opts.invert)
        .multi_line(opts.pattern.multiline)
        .max_matches(opts.max_count)
        .before_context(opts.before)
        .after_context(opts.after)
        .build()
}

/// What searching one file printed.
#[derive(Debug)]
pub struct Printed {
    /// rg's output for the file (empty if it has no match).
    pub bytes: Vec<u8>,
    /// How many matches (lines, or 1 for a file with `-l`), or why the file
    /// could not be read, as rg words it.
    pub result: std::result::Result<u64, String>,
    /// For `--json`'s closing summary.
    pub stats: Stats,
}

/// A candidate's bytes as the index keeps them: file `id` of `index`,
/// which is as the file is (the base of a fresh snapshot), read from the
/// mapped index instead of from the file ([`Index::kept`]).
#[derive(Debug, Clone, Copy)]
pub struct Stored<'a> {
    pub index: &'a Index,
    pub id: usize,
}

impl Stored<'_> {
    /// Runs `f` on the bytes `range` of the copy, read into this thread's
    /// buffer ([`COPY_BUF`]; a buffer of their own if `f` reads another
    /// copy meanwhile); `None` (and `f` not run) if the copy does not read.
    fn with<R>(self, range: Range<u64>, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        COPY_BUF.with(|cell| {
            let Ok(mut buf) = cell.try_borrow_mut() else {
                return Some(f(&self.index.kept(self.id, range)?));
            };
            let n = self.index.kept_into(self.id, range, &mut buf)?;
            let r = f(buf.get(..n)?);
            if buf.len() > COPY_BUF_KEPT {
                *buf = Vec::new();
            }
            Some(r)
        })
    }

    /// [`Stored::with`] the whole file.
    fn with_whole<R>(self, f: impl FnOnce(&[u8]) -> R) -> Option<R> {
        self.with(0..self.index.size(self.id), f)
    }
}

thread_local! {
    /// A thread's buffer for the copies it reads: kept between reads (no
    /// allocation, and no zeroing, for each file a search reads), unless a
    /// read made it larger than [`COPY_BUF_KEPT`].
    static COPY_BUF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The largest buffer a thread keeps for its next copy ([`COPY_BUF`]).
const COPY_BUF_KEPT: usize = 1 << 20;

/// Searches a whole file with `s`: its stored copy if there is one (and it
/// reads), else the file at `path`.
fn search_whole<S: grep_searcher::Sink>(
    s: &mut Searcher,
    matcher: &RegexMatcher,
    path: &Path,
    stored: Option<Stored<'_>>,
    sink: S,
) -> std::result::Result<(), S::Error> {
    let mut sink = sink;
    let copied =
        stored.and_then(|k| k.with_whole(|bytes| s.search_slice(matcher, bytes, &mut sink)));
    match copied {
        Some(r) => r,
        None => s.search_path(matcher, path, sink),
    }
}

/// Searches the file at `path` with `s` (built by [`searcher`] for `opts`,
/// and reused: its buffer is 64 KiB) and prints what rg would, naming it
/// `shown`. With `regions`, only those parts are read if they suffice;
/// with `stored`, from the index's copy.
pub fn print_file(
    s: &mut Searcher,
    matcher: &RegexMatcher,
    opts: &Options,
    (path, shown): (&Path, &Path),
    regions: Option<&Regions>,
    stored: Option<Stored<'_>>,
) -> Printed {
    let mut out = if opts.color {
        Buffer::ansi()
    } else {
        Buffer::no_color()
    };
    let mut stats = Stats::new();
    let result = search_file(
        s,
        matcher,
        opts,
        (path, shown),
        (regions, stored),
        &mut out,
        &mut stats,
    );
    Printed {
        bytes: out.into_inner(),
        result,
        stats,
    }
}

/// Searches one file into `out` (see [`print_file`]); whether it matched.
/// A file that cannot be read is an error message, as rg prints it.
fn search_file(
    s: &mut Searcher,
    matcher: &RegexMatcher,
    opts: &Options,
    (path, shown): (&Path, &Path),
    (regions, stored): (Option<&Regions>, Option<Stored<'_>>),
    out: &mut Buffer,
    stats: &mut Stats,
) -> std::result::Result<u64, String> {
    // The matching lines in the regions, printed plainly, where they
    // suffice; else the regions through rg's printer, where they suffice;
    // else the file, whole.
    // Paths need only a file's first match.
    let max = match opts.output {
        Output::Files => 1,
        _ => opts
            .max_count
            .map_or(0, |m| usize::try_from(m).unwrap_or(usize::MAX)),
    };
    if let Some(lines) = regions.filter(|_| plain_regions(opts)).and_then(|r| {
        region_lines(
            matcher,
            path,
            r,
            (max, opts.output == Output::Lines),
            stored,
        )
    }) {
        return Ok(print_plain(opts, shown, &lines, out));
    }
    let parts = regions
        .filter(|_| printed_regions(opts))
        .and_then(|r| read_regions(path, r, stored));
    let r = match opts.output {
        Output::Lines => {
            let mut p = StandardBuilder::new()
                .heading(opts.heading)
                .path(opts.with_path)
                .only_matching(opts.only_matching)
                .color_specs(ColorSpecs::default_with_color())
                .build(&mut *out);
            match &parts {
                Some(parts) => {
                    let mut n = 0;
                    let mut r = Ok(());
                    for (_, bytes) in parts {
                        let mut sink = p.sink_with_path(matcher, shown);
                        r = s.search_slice(matcher, bytes, &mut sink);
                        n += sink.match_count();
                        if r.is_err() {
                            break;
                        }
                    }
                    r.map(|()| n)
                }
                None => {
                    let mut sink = p.sink_with_path(matcher, shown);
                    let r = search_whole(s, matcher, path, stored, &mut sink);
                    r.map(|()| sink.match_count())
                }
            }
        }
        Output::Files | Output::Count | Output::CountMatches => {
            let kind = match opts.output {
                Output::Files => SummaryKind::PathWithMatch,
                Output::Count => SummaryKind::Count,
                _ => SummaryKind::CountMatches,
            };
            let mut p = SummaryBuilder::new()
                .kind(kind)
                .path(opts.with_path || opts.output == Output::Files)
                .color_specs(ColorSpecs::default_with_color())
                .build(&mut *out);
            let mut sink = p.sink_with_path(matcher, shown);
            let r = search_whole(s, matcher, path, stored, &mut sink);
            r.map(|()| u64::from(sink.has_match()))
        }
        Output::Json => {
            let mut p = JSONBuilder::new().build(&mut *out);
            let mut sink = p.sink_with_path(matcher, shown);
            let r = search_whole(s, matcher, path, stored, &mut sink);
            *stats += sink.stats();
            r.map(|()| sink.match_count())
        }
    };
    match r {
        Err(e) if opts.gone_ok && e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        r => r.map_err(|e| format!("{}: {e}", shown.display())),
    }
}

/// rg's closing `--json` message: the totals and the elapsed time.
pub fn summary_line(stats: &Stats, elapsed: std::time::Duration) -> Vec<u8> {
    let line = serde_json::json!({
        "type": "summary",
        "data": {
            "elapsed_total": {
                "secs": elapsed.as_secs(),
                "nanos": elapsed.subsec_nanos(),
                "human": format!("{:0.6}s", elapsed.as_secs_f64()),
            },
            "stats": stats,
        },
    });
    let mut out = serde_json::to_vec(&line).unwrap_or_default();
    out.push(b'\n');
    out
}

/// What a search found.
#[derive(Debug, Default)]
pub struct Outcome {
    pub matched: bool,
    pub errors: Vec<String>,
}

/// Up to this many files are searched on the calling thread: for an
/// index's answer to a selective query (a handful of files), starting a
/// pool's threads costs more than the search (a 20-file query from the
/// command line took 0.3 ms less this way on the development machine).
pub const SEQUENTIAL_MAX: usize = 64;

/// Searches `files` with `matcher` (`opts.pattern`'s, built once by the
/// caller) in parallel and prints the results in their order. A file may
/// come with the only parts of it that can match, which are then all that
/// is read if [`regions_suffice`].
pub fn search(
    files: &[(PathBuf, Option<Regions>)],
    matcher: &RegexMatcher,
    opts: &Options,
) -> Result<Outcome> {
    let started = std::time::Instant::now();
    let one = |s: &mut Searcher, (path, regions): &(PathBuf, Option<Regions>), opts: &Options| {
        print_file(s, matcher, opts, (path, path), regions.as_ref(), None)
    };
    let results: Vec<Printed> = match opts.limit {
        None if files.len() <= SEQUENTIAL_MAX => {
            let mut s = searcher(opts);
            files.iter().map(|p| one(&mut s, p, opts)).collect()
        }
        None => files
            .par_iter()
            .map_init(|| searcher(opts), |s, p| one(s, p, opts))
            .collect(),
        Some(limit) => {
            let mut left = limit;
            let mut out = Vec::new();
            for p in files {
                if left == 0 {
                    break;
                }
                let o = Options {
                    max_count: Some(opts.max_count.map_or(left, |m| m.min(left))),
                    ..opts.clone()
                };
                let r = one(&mut searcher(&o), p, &o);
                left -= r.result.as_ref().map_or(0, |n| (*n).min(left));
                out.push(r);
            }
            out
        }
    };
    let mut out = Joiner::new(opts);
    let mut total = Stats::new();
    for p in results {
        total += p.stats;
        // A closed pipe (`greppy x | head`) ends the output quietly.
        if out.file(&p.bytes, p.result).is_err() {
            return Ok(out.outcome);
        }
    }
    if opts.output == Output::Json {
        let _ = out.write(&summary_line(&total, started.elapsed()));
    }
    Ok(out.finish())
}

/// What rg prints between two files' outputs: `--` when it prints context
/// lines without headings.
pub fn between_files(opts: &Options) -> &'static [u8] {
    if opts.output == Output::Lines && !opts.heading && opts.before + opts.after > 0 {
        b"--\n"
    } else {
        b""
    }
}

/// Writes files' outputs to stdout one after another, as rg joins them,
/// and keeps the tally of what they found.
#[derive(Debug)]
pub struct Joiner {
    out: std::io::StdoutLock<'static>,
    /// What rg puts between files ([`between_files`]).
    between: &'static [u8],
    printed: bool,
    outcome: Outcome,
}

impl Joiner {
    pub fn new(opts: &Options) -> Joiner {
        Joiner {
            out: std::io::stdout().lock(),
            between: between_files(opts),
            printed: false,
            outcome: Outcome::default(),
        }
    }

    /// One file's output and what it found. An error is kept for the end,
    /// where rg prints errors; a failed write (a closed pipe) is returned.
    pub fn file(
        &mut self,
        bytes: &[u8],
        result: std::result::Result<u64, String>,
    ) -> std::io::Result<()> {
        match result {
            Ok(n) => self.outcome.matched |= n > 0,
            Err(e) => self.outcome.errors.push(e),
        }
        if bytes.is_empty() {
            return Ok(());
        }
        if self.printed {
            self.out.write_all(self.between)?;
        }
        self.printed = true;
        self.out.write_all(bytes)
    }

    /// Bytes of no file (a closing summary).
    pub fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.out.write_all(bytes)
    }

    /// What the files found.
    pub fn finish(mut self) -> Outcome {
        let _ = self.out.flush();
        self.outcome
    }
}

/// The matching lines of `files`, as (file, 1-based line number), in file
/// order: what a search would print, as data (for the index's tests and
/// the daemon).
pub fn lines<'p>(
    files: impl IntoParallelIterator<Item = &'p Path>,
    pattern: &Pattern,
) -> Result<Vec<(PathBuf, u64)>> {
    let matcher = pattern.matcher()?;
    let per_file: Vec<Vec<(PathBuf, u64)>> = files
        .into_par_iter()
        .map(|path| {
            file_lines(&matcher, path, None, None)
                .into_iter()
                .map(|(n, _)| (path.to_path_buf(), n))
                .collect()
        })
        .collect();
    Ok(per_file.into_iter().flatten().collect())
}

thread_local! {
    /// One searcher per thread for the daemon's per-file searches (its
    /// buffer is reused instead of allocated for every file).
    static LINE_SEARCHER: std::cell::RefCell<Searcher> = std::cell::RefCell::new(searcher(&Options {
        line_number: true,
        ..Options::default()
    }));
    /// The same, counting no lines.
    static COUNT_SEARCHER: std::cell::RefCell<Searcher> =
        std::cell::RefCell::new(searcher(&Options::default()));
}

/// A sink that gathers matching lines as (line number counted from
/// `before`, the line without its terminator, if `texts`), and stops after
/// `max` (0: never).
struct Collect<'a> {
    found: &'a mut Vec<(u64, Vec<u8>)>,
    before: u64,
    texts: bool,
    max: usize,
    more: &'a mut bool,
}

impl grep_searcher::Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(
        &mut self,
        _: &Searcher,
        m: &grep_searcher::SinkMatch<'_>,
    ) -> std::result::Result<bool, std::io::Error> {
        let text = if self.texts {
            let line = m.bytes();
            line.strip_suffix(b"\n").unwrap_or(line).to_vec()
        } else {
            Vec::new()
        };
        let n = m.line_number().unwrap_or(0);
        self.found.push((self.before + n, text));
        *self.more = self.max == 0 || self.found.len() < self.max;
        Ok(*self.more)
    }
}

/// The most bytes of a file's regions read into memory at once; a file
/// whose regions come to more is searched whole, through the searcher's
/// own buffer.
const REGIONS_MAX: u64 = 4 << 20;

/// One file's matching lines, as (1-based line number, the line without its
/// terminator), searched as rg searches it; at most `max` (0: all).
fn matching_lines(
    matcher: &RegexMatcher,
    path: &Path,
    max: usize,
    stored: Option<Stored<'_>>,
) -> Vec<(u64, Vec<u8>)> {
    let mut found = Vec::new();
    LINE_SEARCHER.with_borrow_mut(|s| {
        let _ = search_whole(
            s,
            matcher,
            path,
            stored,
            grep_searcher::sinks::Bytes(|n, line| {
                found.push((n, line.strip_suffix(b"\n").unwrap_or(line).to_vec()));
                Ok(max == 0 || found.len() < max)
            }),
        );
    });
    found
}

/// Where a file's regions are read from: the index's copy, or the file if
/// it is still the size the regions were measured at.
enum Source<'a> {
    Copy(Stored<'a>),
    File(std::fs::File),
}

impl Source<'_> {
    /// Where `regions` are read from; `None` if they must be read whole
    /// (another size, or more than [`REGIONS_MAX`] of them).
    fn open<'a>(path: &Path, regions: &Regions, stored: Option<Stored<'a>>) -> Option<Source<'a>> {
        let total: u64 = regions
            .parts
            .iter()
            .map(|r| r.end.saturating_sub(r.start))
            .sum();
        if total > REGIONS_MAX {
            return None;
        }
        match stored {
            Some(k) => Some(Source::Copy(k)),
            None => {
                let f = std::fs::File::open(path).ok()?;
                if f.metadata().ok()?.len() != regions.size {
                    return None;
                }
                Some(Source::File(f))
            }
        }
    }

    /// The bytes of region `r`; `None` if searching them alone would not
    /// find what searching the file finds (a NUL byte, a region that starts
    /// with a byte order mark, a read error): then the file must be read
    /// whole.
    fn read(&self, r: &Region) -> Option<Vec<u8>> {
        use std::os::unix::fs::FileExt;
        let len = r.end.checked_sub(r.start)?;
        let buf = match self {
            Source::File(f) => {
                let mut buf = vec![0u8; usize::try_from(len).ok()?];
                f.read_exact_at(&mut buf, r.start).ok()?;
                buf
            }
            Source::Copy(k) => k.index.kept(k.id, r.start..r.end)?,
        };
        searchable_alone(&buf, r).then_some(buf)
    }
}

/// Whether region `r`, whose bytes are `buf`, searched alone finds what
/// searching its file finds there: no NUL byte (rg's binary detection
/// would see the whole file), no byte order mark at its start past the
/// file's, and a line number.
fn searchable_alone(buf: &[u8], r: &Region) -> bool {
    let bom = [&b"\xef\xbb\xbf"[..], b"\xff\xfe", b"\xfe\xff"]
        .iter()
        .any(|m| buf.starts_with(m));
    memchr::memchr(0, buf).is_none() && !(r.start > 0 && bom) && r.line != 0
}

/// The bytes of the `regions` of `path`, each with its region; `None` if
/// the file is no longer as the regions were measured (another size, a NUL
/// byte, a region that starts with a byte order mark, a read error), or
/// they come to more than [`REGIONS_MAX`]: then it must be read whole.
/// Regions are whole lines, and a match never spans lines, so searching
/// them finds what searching the file finds. With `stored`, they are read
/// from the index's copy (if it has them).
fn read_regions(
    path: &Path,
    regions: &Regions,
    stored: Option<Stored<'_>>,
) -> Option<Vec<(Region, Vec<u8>)>> {
    let from = Source::open(path, regions, stored)?;
    regions
        .parts
        .iter()
        .map(|r| Some((*r, from.read(r)?)))
        .collect()
}

/// The matching lines (at most `max`; 0: all) in the `regions` of `path`
/// only, as [`matching_lines`] finds them there; `None` if the file must be
/// read whole ([`read_regions`]). From the index's copy, a region is
/// read only when those before it have not found `max` lines: the copy is
/// the file as it was indexed, so what lies past them cannot change what
/// they found. (A file on disk may have changed since: all of its regions
/// are read and checked first.)
fn region_lines(
    matcher: &RegexMatcher,
    path: &Path,
    regions: &Regions,
    (max, texts): (usize, bool),
    stored: Option<Stored<'_>>,
) -> Option<Vec<(u64, Vec<u8>)>> {
    let from = Source::open(path, regions, stored)?;
    let read: Vec<Option<Vec<u8>>> = match from {
        Source::Copy(_) => regions.parts.iter().map(|_| None).collect(),
        Source::File(_) => regions
            .parts
            .iter()
            .map(|r| from.read(r).map(Some))
            .collect::<Option<_>>()?,
    };
    let mut found = Vec::new();
    // Counts and paths need neither the lines' text nor their numbers (a
    // copy of every line, where nearly every line matches, was a fifth of
    // the daemon's time on `-c e`, and counting lines another sixth).
    let searcher = if texts {
        &LINE_SEARCHER
    } else {
        &COUNT_SEARCHER
    };
    searcher.with_borrow_mut(|s| {
        for (r, buf) in regions.parts.iter().zip(read) {
            let mut more = true;
            let mut search = |buf: &[u8]| {
                let sink = Collect {
                    found: &mut found,
                    before: r.line - 1,
                    texts,
                    max,
                    more: &mut more,
                };
                s.search_slice(matcher, buf, sink).ok()
            };
            match (buf, &from) {
                (Some(b), _) => search(&b)?,
                // A copy's region is read into the thread's buffer; one that
                // does not read, or is not searchable alone, or whose search
                // fails, has the file read whole.
                (None, Source::Copy(k)) => {
                    let searched = k.with(r.start..r.end, |b| {
                        searchable_alone(b, r).then(|| search(b))
                    });
                    searched.flatten().flatten()?;
                }
                (None, Source::File(_)) => search(&from.read(r)?)?,
            }
            if !more {
                break;
            }
        }
        Some(())
    })?;
    Some(found)
}

/// Whether a file's output can come from searching only its regions (the
/// parts of it where a match may be): by rg's printer ([`printed_regions`])
/// or in its plain format ([`plain_regions`]).
pub fn regions_suffice(opts: &Options) -> bool {
    printed_regions(opts) || plain_regions(opts)
}

/// Whether rg's printer, given only a file's regions, prints what it prints
/// for the file: matching lines alone, with no line numbers (the printer
/// counts from the start of what it is given), context, heading, or cap
/// that spans the file.
fn printed_regions(opts: &Options) -> bool {
    opts.output == Output::Lines
        && !opts.line_number
        && opts.before == 0
        && opts.after == 0
        && !opts.heading
        && opts.max_count.is_none()
        && opts.limit.is_none()
}

/// Whether the output is rg's plain format, which [`print_plain`] writes
/// from the matching lines and their numbers: lines (`path:line:text`,
/// each part optional), counts or paths, without colour, context or
/// headings.
fn plain_regions(opts: &Options) -> bool {
    matches!(opts.output, Output::Lines | Output::Count | Output::Files)
        && !opts.only_matching
        && !opts.color
        && opts.before == 0
        && opts.after == 0
        && !opts.heading
        && opts.max_count != Some(0)
}

/// Writes what rg's printer writes for a file named `shown` whose matching
/// lines are `lines` (numbered, without terminators), in the plain format
/// ([`plain_regions`]); the count of matches.
fn print_plain(opts: &Options, shown: &Path, lines: &[(u64, Vec<u8>)], out: &mut Buffer) -> u64 {
    let path = shown.as_os_str().as_bytes();
    let n = lines.len() as u64;
    let _ = match opts.output {
        Output::Count if n > 0 => if opts.with_path {
            out.write_all(path).and_then(|()| out.write_all(b":"))
        } else {
            Ok(())
        }
        .and_then(|()| writeln!(out, "{n}")),
        Output::Files if n > 0 => out.write_all(path).and_then(|()| out.write_all(b"\n")),
        Output::Lines => lines.iter().try_for_each(|(number, text)| {
            if opts.with_path {
                out.write_all(path)?;
                out.write_all(b":")?;
            }
            if opts.line_number {
                write!(out, "{number}:")?;
            }
            out.write_all(text)?;
            out.write_all(b"\n")
        }),
        _ => Ok(()),
    };
    n
}

/// One file's matching lines, as (1-based line number, the line without its
/// terminator), searched as rg searches it; only in `regions`, if given
/// (the index's word on where a match may be); from the index's copy, if
/// `stored`.
pub fn file_lines(
    matcher: &RegexMatcher,
    path: &Path,
    regions: Option<&Regions>,
    stored: Option<Stored<'_>>,
) -> Vec<(u64, Vec<u8>)> {
    regions
        .and_then(|r| region_lines(matcher, path, r, (0, true), stored))
        .unwrap_or_else(|| matching_lines(matcher, path, 0, stored))
}

/// Whether `path` has a matching line, searched as rg searches it (it stops
/// at the first); only in `regions`, if given; from the index's copy, if
/// `stored`.
pub fn file_matches(
    matcher: &RegexMatcher,
    path: &Path,
    regions: Option<&Regions>,
    stored: Option<Stored<'_>>,
) -> bool {
    let found = regions
        .and_then(|r| region_lines(matcher, path, r, (1, false), stored))
        .unwrap_or_else(|| matching_lines(matcher, path, 1, stored));
    !found.is_empty()
}

/// rg's hints after a regex error: multiline mode for a line terminator in
/// the pattern, text mode for a NUL.
pub fn suggest(msg: String) -> String {
    if msg.contains("the literal") && msg.contains("not allowed") {
        format!(
            "{msg}\n\nConsider enabling multiline mode with the --multiline flag (or -U for \
             short).\nWhen multiline mode is enabled, new line characters can be matched."
        )
    } else if msg.contains("pattern contains \"\\0\"") {
        format!(
            "{msg}\n\nConsider enabling text mode with the --text flag (or -a for short). \
             Otherwise,\nbinary detection is enabled and matching a NUL byte is impossible."
        )
    } else {
        msg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walk on the walker's threads takes what rg's walk on one thread
    /// takes: the same files (in path order) and folders, ignore files,
    /// hidden names and nested ignores applied alike.
    #[test]
    fn the_parallel_walk_takes_what_a_single_walk_takes() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        std::fs::create_dir(top.join(".git")).unwrap();
        std::fs::write(top.join(".gitignore"), "*.log\nbuild/\n").unwrap();
        for d in 0..20 {
            let sub = top.join(format!("d{d}/e{}", d % 3));
            std::fs::create_dir_all(&sub).unwrap();
            std::fs::write(sub.join(".ignore"), "skip*\n").unwrap();
            for f in ["a.rs", "b.log", ".hidden", "skip.rs", "c.txt"] {
                std::fs::write(sub.join(f), "x").unwrap();
            }
            std::fs::create_dir_all(top.join(format!("d{d}/build"))).unwrap();
            std::fs::write(top.join(format!("d{d}/build/out.rs")), "x").unwrap();
        }
        let tree = walk_tree(top);
        let (mut files, mut dirs) = (Vec::new(), rustc_hash::FxHashSet::default());
        for e in ignore::WalkBuilder::new(top).build().flatten() {
            match e.file_type() {
                Some(t) if t.is_file() => files.push(e.into_path()),
                Some(t) if t.is_dir() => {
                    dirs.insert(e.into_path());
                }
                _ => {}
            }
        }
        files.sort();
        assert_eq!(tree.files, files);
        // a.rs and c.txt in each folder: the rest are ignored or hidden.
        assert_eq!(tree.files.len(), 20 * 2);
        assert_eq!(tree.dirs, dirs);
        assert!(tree.errors.is_empty());
    }
}
