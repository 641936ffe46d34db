//! rg's search with every flag: the command lines that the index's own
//! search path ([`crate::search`] with [`crate::search::Options`]) does not
//! cover are run here, with ripgrep's walker (`ignore`), searcher
//! (`grep-searcher`), matchers (`grep-regex`, `grep-pcre2`) and printers
//! (`grep-printer`) configured as rg configures them from the same flags.
//! The files come from the index where the flags leave the candidates as
//! they are ([`narrows`]); else from a walk, as rg's.

use crate::flags::{Cli, EngineChoice, Generate, SortBy, When};
use crate::index::Regions;
use grep_matcher::Matcher;
use grep_printer::{ColorSpecs, JSON, JSONBuilder, Standard, StandardBuilder, Stats, Summary};
use grep_printer::{SummaryBuilder, SummaryKind, UserColorSpec};
use grep_searcher::{BinaryDetection, Encoding, Searcher, SearcherBuilder, Sink};
use rayon::prelude::*;
use std::io::{IsTerminal, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use termcolor::Buffer;

/// Files with the parts of them that may match, as the index names them,
/// and the walk's errors.
pub type Candidates = (Vec<(PathBuf, Option<Regions>)>, Vec<String>);

/// Whether the command line needs this module: a flag of [`RgFlags`]
/// (`crate::flags::RgFlags`) is given, a file or standard input is among
/// the things to search (rg searches those even if binary, and names them
/// as given), or rg would read standard input for want of a path.
pub fn needed(cli: &Cli) -> bool {
    cli.rg != crate::flags::RgFlags::default()
        || cli.files
        // What the index cannot narrow is scanned here, as rg scans it
        // (`-v`, `-U`, `--hidden`, `--max-depth` among the index's own
        // flags).
        || scans(cli)
        // A mapped file's binary detection sees more than a read's.
        || cli.mmap
        || cli.patterns.len() > 1
        || cli.sort.is_some_and(|s| s != SortBy::Path && s != SortBy::None)
        || cli.path_separator.as_deref().is_some_and(|s| s != "/")
        || (cli.paths.is_empty() && grep_cli::is_readable_stdin())
        || cli.paths.iter().any(|p| p.as_os_str() == "-" || !p.is_dir())
}

/// Whether the flags change which files can match, or what a file's bytes
/// are, so that the index's candidates are not the answer's: the search
/// walks and reads every file, as rg does.
pub fn scans(cli: &Cli) -> bool {
    scans_always(cli) || widens(cli)
}

/// The walk flags of an editor's search (VS Code passes each of them),
/// which the daemon answers from beside the index where the tree allows
/// (`crate::protocol::SearchQuery`), and which [`run`] applies to the
/// candidates where it can (`--max-filesize`).
pub fn widens(cli: &Cli) -> bool {
    let r = &cli.rg;
    cli.hidden || r.follow || r.no_ignore_parent || r.no_ignore_global || r.max_filesize.is_some()
}

/// [`scans`], but for the flags of [`widens`]: the index cannot narrow.
pub fn scans_always(cli: &Cli) -> bool {
    let r = &cli.rg;
    r.text
        || r.binary
        || r.unrestricted > 0
        || r.no_ignore
        || r.no_ignore_dot
        || r.no_ignore_vcs
        || r.no_ignore_exclude
        || r.no_ignore_files
        || r.no_require_git
        || !r.ignore_file.is_empty()
        || r.one_file_system
        || r.ignore_file_case_insensitive
        || !r.type_add.is_empty()
        || !r.type_clear.is_empty()
        || !r.types_not.is_empty()
        || !r.iglobs.is_empty()
        || r.glob_case_insensitive
        || r.encoding.as_deref().is_some_and(|e| e != "auto")
        || r.search_zip
        || r.pre.is_some()
        || r.files_without_match
        || r.include_zero
        || r.stats
        || r.null_data
        || r.no_unicode
        || r.multiline_dotall
        || pcre2_used(cli)
        || cli.invert_match
        || cli.multiline
        || cli.max_depth.is_some()
}

/// Whether PCRE2 answers: chosen, or chosen for what the default engine
/// cannot compile. The index plans with the default engine's syntax, so a
/// PCRE2 search walks and reads every file.
fn pcre2_used(cli: &Cli) -> bool {
    match cli.rg.engine() {
        EngineChoice::Default => false,
        EngineChoice::Pcre2 => true,
        EngineChoice::Auto => {
            !cli.fixed_given
                && cli
                    .patterns
                    .iter()
                    .any(|p| regex_syntax::ParserBuilder::new().build().parse(p).is_err())
        }
    }
}

/// The program's name in messages: rg's `rg: ` when installed as `rg`.
pub fn prefix() -> &'static str {
    static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        let arg0 = std::env::args_os().next().unwrap_or_default();
        let name = Path::new(&arg0)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name == "rg" { "rg" } else { "greppy" }.to_string()
    })
}

/// Prints `message` as rg prints its errors.
fn error(message: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr().lock(), "{}: {message}", prefix());
}

/// The one matcher a search runs: Rust's regex engine, or PCRE2.
enum Engine {
    Rust(grep_regex::RegexMatcher),
    Pcre2(grep_pcre2::RegexMatcher),
}

/// Which printer, and for what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Standard,
    Json,
    Summary(SummaryKind),
}

/// Something to search: a path as walked and as shown, whether it was
/// named on the command line (rg then searches it even if binary) and
/// whether it is standard input.
struct Haystack {
    path: PathBuf,
    shown: PathBuf,
    explicit: bool,
    stdin: bool,
}

/// Everything the flags decide, worked out once (rg's "high-level
/// arguments").
struct Plan {
    patterns: Vec<String>,
    paths: Vec<PathBuf>,
    implicit: bool,
    mode: Mode,
    /// `--json` (its statistics are a JSON message, even with `-q`).
    json: bool,
    quiet: bool,
    /// `--path-separator`.
    path_separator: Option<u8>,
    mmap: grep_searcher::MmapChoice,
    stats: bool,
    color: bool,
    colors: ColorSpecs,
    heading: bool,
    with_filename: bool,
    line_number: bool,
    column: bool,
    null: bool,
    file_separator: Option<Vec<u8>>,
    context_separator: Option<Vec<u8>>,
    field_match: Vec<u8>,
    field_context: Vec<u8>,
    binary_explicit: BinaryDetection,
    binary_implicit: BinaryDetection,
    sort: Option<(SortBy, bool)>,
    messages: bool,
    ignore_messages: bool,
    max_filesize: Option<u64>,
    dfa_size_limit: Option<usize>,
    regex_size_limit: Option<usize>,
    encoding: Option<Option<Encoding>>,
    decompress: Option<grep_cli::DecompressionReaderBuilder>,
    pre_globs: ignore::overrides::Override,
    hyperlink: grep_printer::HyperlinkConfig,
}

/// A flag's value did not parse: rg's message.
struct BadFlag(String);

impl Plan {
    fn new(cli: &Cli) -> Result<Plan, BadFlag> {
        let r = &cli.rg;
        let tty = std::io::stdout().is_terminal();
        let (paths, implicit, one_file) = if !cli.paths.is_empty() {
            let one =
                cli.paths.len() == 1 && (cli.paths[0].as_os_str() == "-" || !cli.paths[0].is_dir());
            (cli.paths.clone(), false, one)
        } else if grep_cli::is_readable_stdin()
            && !r.pattern_files.iter().any(|f| f.as_os_str() == "-")
            && !cli.files
            && !r.type_list
        {
            (vec![PathBuf::from("-")], true, true)
        } else {
            (vec![PathBuf::from("./")], true, false)
        };
        let only_stdin = paths.len() == 1 && paths[0].as_os_str() == "-";
        let mode = if r.files_without_match {
            Mode::Summary(SummaryKind::PathWithoutMatch)
        } else if cli.files_with_matches {
            Mode::Summary(SummaryKind::PathWithMatch)
        } else if cli.count_matches || (cli.count && cli.only_matching) {
            Mode::Summary(SummaryKind::CountMatches)
        } else if cli.count {
            Mode::Summary(SummaryKind::Count)
        } else if cli.json {
            Mode::Json
        } else {
            Mode::Standard
        };
        let mode = match mode {
            Mode::Summary(SummaryKind::PathWithoutMatch) if r.quiet => {
                Mode::Summary(SummaryKind::QuietWithoutMatch)
            }
            _ if r.quiet => Mode::Summary(SummaryKind::QuietWithMatch),
            m => m,
        };
        let color = match cli.color {
            When::Always | When::Ansi => true,
            When::Never => false,
            When::Auto => tty || r.pretty,
        };
        let mut specs = grep_printer::default_color_specs();
        for c in &r.colors {
            specs.push(
                c.parse::<UserColorSpec>()
                    .map_err(|e| BadFlag(format!("error parsing flag --colors: {e}")))?,
            );
        }
        let column = if r.no_column {
            false
        } else {
            r.column || r.vimgrep
        };
        let heading = if r.no_heading {
            false
        } else if r.heading || r.pretty {
            !r.vimgrep
        } else {
            !r.vimgrep && tty
        };
        let with_filename = if r.no_filename {
            false
        } else {
            r.with_filename || r.vimgrep || !one_file
        };
        let context =
            cli.before.or(cli.context).unwrap_or(0) + cli.after.or(cli.context).unwrap_or(0);
        let unescape = |s: &str| grep_cli::unescape(s);
        let context_separator = if r.no_context_separator {
            None
        } else {
            Some(
                r.context_separator
                    .as_deref()
                    .map_or(b"--".to_vec(), unescape),
            )
        };
        let file_separator = match mode {
            Mode::Standard if heading => Some(Vec::new()),
            Mode::Standard if context > 0 && !r.passthru => context_separator.clone(),
            _ => None,
        };
        let summary = matches!(mode, Mode::Summary(_));
        let line_number = if cli.no_line_number {
            false
        } else if cli.line_number || r.pretty {
            true
        } else if r.quiet || summary {
            false
        } else {
            mode == Mode::Json || (tty && !only_stdin) || column || r.vimgrep
        };
        let none = r.text || r.null_data;
        let convert = r.binary || r.unrestricted >= 3;
        let binary_explicit = if none {
            BinaryDetection::none()
        } else {
            BinaryDetection::convert(b'\x00')
        };
        let binary_implicit = if none {
            BinaryDetection::none()
        } else if convert {
            BinaryDetection::convert(b'\x00')
        } else {
            BinaryDetection::quit(b'\x00')
        };
        let sort = match (r.sortr, cli.sort) {
            (Some(k), _) => Some((k, true)),
            (None, Some(k)) => Some((k, false)),
            (None, None) if r.sort_files => Some((SortBy::Path, false)),
            _ => None,
        };
        let size = |flag: &str, v: &Option<String>| -> Result<Option<u64>, BadFlag> {
            v.as_deref()
                .map(|s| {
                    grep_cli::parse_human_readable_size(s)
                        .map_err(|e| BadFlag(format!("error parsing flag --{flag}: {e}")))
                })
                .transpose()
        };
        let as_usize = |n: Option<u64>| n.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        let encoding = match r.encoding.as_deref() {
            None | Some("auto") => None,
            Some("none") => Some(None),
            Some(label) => {
                Some(Some(Encoding::new(label).map_err(|e| {
                    BadFlag(format!("error parsing flag --encoding: {e}"))
                })?))
            }
        };
        let decompress = if r.search_zip {
            Some(grep_cli::DecompressionReaderBuilder::new())
        } else {
            None
        };
        let cwd = std::env::current_dir().unwrap_or_default();
        let pre_globs = if r.pre_globs.is_empty() {
            ignore::overrides::Override::empty()
        } else {
            let mut b = ignore::overrides::OverrideBuilder::new(&cwd);
            for g in &r.pre_globs {
                b.add(g).map_err(|e| BadFlag(e.to_string()))?;
            }
            b.build().map_err(|e| BadFlag(e.to_string()))?
        };
        // rg maps a few named files, and nothing else unless asked to.
        let mmap = if cli.no_mmap {
            grep_searcher::MmapChoice::never()
        } else if cli.mmap || (paths.len() <= 10 && paths.iter().all(|p| p.is_file())) {
            // SAFETY: a mapped file is only read, into the searcher's
            // matching; a file truncated meanwhile can raise SIGBUS, as it
            // can in rg, which maps the same files.
            unsafe { grep_searcher::MmapChoice::auto() }
        } else {
            grep_searcher::MmapChoice::never()
        };
        let hyperlink = {
            let fmt = match r.hyperlink_format.as_deref() {
                None => grep_printer::HyperlinkFormat::default(),
                Some(f) => f
                    .parse()
                    .map_err(|e| BadFlag(format!("error parsing flag --hyperlink-format: {e}")))?,
            };
            let mut env = grep_printer::HyperlinkEnvironment::new();
            env.host(hostname(r.hostname_bin.as_deref()));
            grep_printer::HyperlinkConfig::new(env, fmt)
        };
        Ok(Plan {
            patterns: cli.patterns.clone(),
            paths,
            implicit,
            mode,
            json: cli.json,
            quiet: r.quiet,
            path_separator: cli.path_separator.as_deref().and_then(|s| s.bytes().next()),
            mmap,
            stats: r.stats || mode == Mode::Json,
            color,
            colors: ColorSpecs::new(&specs),
            heading,
            with_filename,
            line_number,
            column,
            null: r.null,
            file_separator,
            context_separator,
            field_match: r
                .field_match_separator
                .as_deref()
                .map_or(b":".to_vec(), unescape),
            field_context: r
                .field_context_separator
                .as_deref()
                .map_or(b"-".to_vec(), unescape),
            binary_explicit,
            binary_implicit,
            sort,
            messages: !r.no_messages,
            ignore_messages: !r.no_ignore_messages,
            max_filesize: size("max-filesize", &r.max_filesize)?,
            dfa_size_limit: as_usize(size("dfa-size-limit", &r.dfa_size_limit)?),
            regex_size_limit: as_usize(size("regex-size-limit", &r.regex_size_limit)?),
            encoding,
            decompress,
            pre_globs,
            hyperlink,
        })
    }

    /// rg's matcher for these flags, from the engine they choose, or its
    /// message.
    fn matcher(&self, cli: &Cli) -> Result<Engine, String> {
        match cli.rg.engine() {
            EngineChoice::Default => self.matcher_rust(cli).map_err(|e| suggest_pcre2(&e)),
            EngineChoice::Pcre2 => self.matcher_pcre2(cli),
            EngineChoice::Auto => {
                let rust = match self.matcher_rust(cli) {
                    Ok(m) => return Ok(m),
                    Err(e) => e,
                };
                let pcre = match self.matcher_pcre2(cli) {
                    Ok(m) => return Ok(m),
                    Err(e) => e,
                };
                let divider = "~".repeat(79);
                Err(format!(
                    "regex could not be compiled with either the default regex engine or with \
                     PCRE2.\n\ndefault regex engine error:\n{divider}\n{rust}\n{divider}\n\n\
                     PCRE2 regex engine error:\n{pcre}"
                ))
            }
        }
    }

    /// PCRE2's matcher, as rg builds it.
    fn matcher_pcre2(&self, cli: &Cli) -> Result<Engine, String> {
        let r = &cli.rg;
        let mut b = grep_pcre2::RegexMatcherBuilder::new();
        b.multi_line(true).fixed_strings(cli.fixed_given);
        if cli.ignore_case {
            b.caseless(true);
        } else if cli.smart_case {
            b.case_smart(true);
        }
        if cli.line_given {
            b.whole_line(true);
        } else if cli.word_given {
            b.word(true);
        }
        b.jit_if_available(true).max_jit_stack_size(Some(10 << 20));
        if !(r.no_unicode || r.no_pcre2_unicode) {
            b.utf(true).ucp(true);
        }
        if cli.multiline {
            b.dotall(r.multiline_dotall);
        }
        if r.crlf {
            b.crlf(true);
        }
        b.build_many(&self.patterns)
            .map(Engine::Pcre2)
            .map_err(|e| e.to_string())
    }

    /// The default engine's matcher (Rust's regex), as rg builds it.
    fn matcher_rust(&self, cli: &Cli) -> Result<Engine, String> {
        let r = &cli.rg;
        let mut b = grep_regex::RegexMatcherBuilder::new();
        b.multi_line(true)
            .unicode(!r.no_unicode)
            .octal(false)
            .fixed_strings(cli.fixed_given);
        if cli.ignore_case {
            b.case_insensitive(true);
        } else if cli.smart_case {
            b.case_smart(true);
        }
        if cli.line_given {
            b.whole_line(true);
        } else if cli.word_given {
            b.word(true);
        }
        if cli.multiline {
            b.dot_matches_new_line(r.multiline_dotall);
            if r.crlf {
                b.crlf(true).line_terminator(None);
            }
        } else {
            b.line_terminator(Some(b'\n')).dot_matches_new_line(false);
            if r.crlf {
                b.crlf(true);
            }
            if r.null_data {
                b.line_terminator(Some(b'\x00'));
            }
        }
        if let Some(n) = self.regex_size_limit {
            b.size_limit(n);
        }
        if let Some(n) = self.dfa_size_limit {
            b.dfa_size_limit(n);
        }
        if !(self.binary_explicit == BinaryDetection::none()
            && self.binary_implicit == BinaryDetection::none())
        {
            b.ban_byte(Some(b'\x00'));
        }
        b.build_many(&self.patterns)
            .map(Engine::Rust)
            .map_err(|e| crate::search::suggest(e.to_string()))
    }

    fn searcher(&self, cli: &Cli) -> Searcher {
        let r = &cli.rg;
        let term = if r.crlf {
            grep_matcher::LineTerminator::crlf()
        } else if r.null_data {
            grep_matcher::LineTerminator::byte(b'\x00')
        } else {
            grep_matcher::LineTerminator::byte(b'\n')
        };
        let mut b = SearcherBuilder::new();
        b.max_matches(cli.max_count)
            .line_terminator(term)
            .invert_match(cli.invert_match)
            .line_number(self.line_number)
            .multi_line(cli.multiline)
            .memory_map(self.mmap.clone())
            .stop_on_nonmatch(r.stop_on_nonmatch);
        if r.passthru {
            b.passthru(true);
        } else {
            b.before_context(cli.before.or(cli.context).unwrap_or(0))
                .after_context(cli.after.or(cli.context).unwrap_or(0));
        }
        match &self.encoding {
            None => {}
            Some(Some(e)) => {
                b.encoding(Some(e.clone()));
            }
            Some(None) => {
                b.bom_sniffing(false);
            }
        }
        b.build()
    }

    fn printer(&self, cli: &Cli) -> Printer {
        let out = if self.color {
            Buffer::ansi()
        } else {
            Buffer::no_color()
        };
        let r = &cli.rg;
        let terminator = self.null.then_some(b'\x00');
        let replacement = r.replace.as_ref().map(|s| s.as_bytes().to_vec());
        match self.mode {
            Mode::Standard => Printer::Standard(
                StandardBuilder::new()
                    .byte_offset(r.byte_offset)
                    .color_specs(self.colors.clone())
                    .column(self.column)
                    .heading(self.heading)
                    .hyperlink(self.hyperlink.clone())
                    .max_columns_preview(r.max_columns_preview)
                    .max_columns(r.max_columns.filter(|n| *n > 0))
                    .only_matching(cli.only_matching)
                    .path(self.with_filename)
                    .path_terminator(terminator)
                    .per_match_one_line(true)
                    .per_match(r.vimgrep)
                    .replacement(replacement)
                    .separator_context(self.context_separator.clone())
                    .separator_field_context(self.field_context.clone())
                    .separator_field_match(self.field_match.clone())
                    .separator_path(self.path_separator)
                    .stats(self.stats)
                    .trim_ascii(r.trim)
                    .build(out),
            ),
            Mode::Json => Printer::Json(JSONBuilder::new().replacement(replacement).build(out)),
            Mode::Summary(kind) => Printer::Summary(
                SummaryBuilder::new()
                    .color_specs(self.colors.clone())
                    .exclude_zero(!r.include_zero)
                    .hyperlink(self.hyperlink.clone())
                    .kind(kind)
                    .path(self.with_filename)
                    .path_terminator(terminator)
                    .separator_field(b":".to_vec())
                    .separator_path(self.path_separator)
                    .stats(self.stats)
                    .build(out),
            ),
        }
    }

    /// rg's walk of the paths, with every flag that changes it.
    fn walk(&self, cli: &Cli, paths: &[PathBuf]) -> Result<ignore::WalkBuilder, BadFlag> {
        let r = &cli.rg;
        let cwd = std::env::current_dir().unwrap_or_default();
        let mut b = ignore::WalkBuilder::new(&paths[0]);
        for p in &paths[1..] {
            b.add(p);
        }
        let no_ignore = r.no_ignore || r.unrestricted >= 1;
        // `--no-ignore` (and `-u`) leave `--ignore-file` in force.
        if !r.no_ignore_files {
            for f in &r.ignore_file {
                if let Some(e) = b.add_ignore(f)
                    && self.messages
                    && self.ignore_messages
                {
                    error(e);
                }
            }
        }
        let mut types = ignore::types::TypesBuilder::new();
        types.add_defaults();
        for name in &r.type_clear {
            types.clear(name);
        }
        for def in &r.type_add {
            types.add_def(def).map_err(|e| BadFlag(e.to_string()))?;
        }
        for t in &cli.types {
            types.select(t);
        }
        for t in &r.types_not {
            types.negate(t);
        }
        let mut globs = ignore::overrides::OverrideBuilder::new(&cwd);
        if r.glob_case_insensitive {
            let _ = globs.case_insensitive(true);
        }
        for g in &cli.globs {
            globs.add(g).map_err(|e| BadFlag(e.to_string()))?;
        }
        let _ = globs.case_insensitive(true);
        for g in &r.iglobs {
            globs.add(g).map_err(|e| BadFlag(e.to_string()))?;
        }
        let vcs = !(no_ignore || r.no_ignore_vcs);
        b.max_depth(cli.max_depth)
            .follow_links(r.follow)
            .max_filesize(self.max_filesize)
            .same_file_system(r.one_file_system)
            .skip_stdout(true)
            .overrides(globs.build().map_err(|e| BadFlag(e.to_string()))?)
            .types(types.build().map_err(|e| BadFlag(e.to_string()))?)
            .hidden(!(cli.hidden || r.unrestricted >= 2))
            .parents(!(no_ignore || r.no_ignore_parent))
            .ignore(!(no_ignore || r.no_ignore_dot))
            .git_global(vcs && !r.no_ignore_global)
            .git_ignore(vcs)
            .git_exclude(vcs && !r.no_ignore_exclude)
            .require_git(!r.no_require_git)
            .ignore_case_insensitive(r.ignore_file_case_insensitive)
            .current_dir(&cwd);
        if !(no_ignore || r.no_ignore_dot) {
            b.add_custom_ignore_filename(".rgignore");
        }
        b.sort_by_file_name(|a, b| a.cmp(b));
        Ok(b)
    }

    /// Whether `--max-filesize` lets the walk take `file`, as the walk
    /// decides it (a file whose size cannot be read is taken).
    fn within_max_filesize(&self, file: &Path) -> bool {
        self.max_filesize
            .is_none_or(|max| file.metadata().map_or(true, |m| m.len() <= max))
    }

    fn haystack(&self, path: PathBuf, explicit: bool, stdin: bool) -> Haystack {
        let shown = match path.strip_prefix("./") {
            Ok(rest) if self.implicit => rest.to_path_buf(),
            _ => path.clone(),
        };
        let shown = if stdin {
            PathBuf::from("<stdin>")
        } else {
            shown
        };
        Haystack {
            path,
            shown,
            explicit,
            stdin,
        }
    }
}

/// This machine's name for hyperlinks: what `--hostname-bin` prints
/// (trimmed), else the kernel's node name.
fn hostname(bin: Option<&Path>) -> Option<String> {
    if let Some(bin) = bin {
        let out = std::process::Command::new(bin)
            .stdin(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        let name = String::from_utf8(out.stdout).ok()?.trim().to_string();
        return (!name.is_empty()).then_some(name);
    }
    grep_cli::hostname()
        .ok()
        .map(|h| h.to_string_lossy().into_owned())
}

/// rg's hint, after the default engine's error, that PCRE2 has what the
/// pattern asks for.
fn suggest_pcre2(msg: &str) -> String {
    if msg.contains("backreferences") || msg.contains("look-around") {
        format!(
            "{msg}\n\nConsider enabling PCRE2 with the --pcre2 flag, which can handle \
             backreferences\nand look-around."
        )
    } else {
        msg.to_string()
    }
}

enum Printer {
    Standard(Standard<Buffer>),
    Summary(Summary<Buffer>),
    Json(JSON<Buffer>),
}

impl Printer {
    fn buffer(&mut self) -> &mut Buffer {
        match self {
            Printer::Standard(p) => p.get_mut(),
            Printer::Summary(p) => p.get_mut(),
            Printer::Json(p) => p.get_mut(),
        }
    }
}

/// Where a haystack's bytes come from.
enum Source<'a> {
    Path(&'a Path),
    Reader(&'a mut dyn std::io::Read),
}

fn feed<M: Matcher, S: Sink<Error = std::io::Error>>(
    m: &M,
    s: &mut Searcher,
    src: Source<'_>,
    sink: S,
) -> std::io::Result<()> {
    match src {
        Source::Path(p) => s.search_path(m, p, sink),
        Source::Reader(r) => s.search_reader(m, r, sink),
    }
}

/// Searches `src` into `p`: whether it matched, and its statistics.
fn search_into<M: Matcher>(
    m: &M,
    s: &mut Searcher,
    p: &mut Printer,
    shown: &Path,
    src: Source<'_>,
) -> std::io::Result<(bool, Option<Stats>)> {
    match p {
        Printer::Standard(p) => {
            let mut sink = p.sink_with_path(m, shown);
            feed(m, s, src, &mut sink)?;
            Ok((sink.has_match(), sink.stats().cloned()))
        }
        Printer::Summary(p) => {
            let mut sink = p.sink_with_path(m, shown);
            feed(m, s, src, &mut sink)?;
            Ok((sink.has_match(), sink.stats().cloned()))
        }
        Printer::Json(p) => {
            let mut sink = p.sink_with_path(m, shown);
            feed(m, s, src, &mut sink)?;
            Ok((sink.has_match(), Some(sink.stats().clone())))
        }
    }
}

/// Searches one haystack as rg's search worker does: standard input, a
/// preprocessor's output, a decompressor's, or the file.
fn search_one<M: Matcher>(
    m: &M,
    s: &mut Searcher,
    p: &mut Printer,
    plan: &Plan,
    cli: &Cli,
    hay: &Haystack,
) -> std::io::Result<(bool, Option<Stats>)> {
    s.set_binary_detection(if hay.explicit {
        plan.binary_explicit.clone()
    } else {
        plan.binary_implicit.clone()
    });
    let shown = hay.shown.as_path();
    if hay.stdin {
        let stdin = std::io::stdin();
        let mut lock = stdin.lock();
        return search_into(m, s, p, shown, Source::Reader(&mut lock));
    }
    let pre = cli.rg.pre.as_ref().filter(|_| {
        plan.pre_globs.is_empty() || !plan.pre_globs.matched(&hay.path, false).is_ignore()
    });
    if let Some(bin) = pre {
        let mut cmd = std::process::Command::new(bin);
        cmd.arg(&hay.path)
            .stdin(std::process::Stdio::from(std::fs::File::open(&hay.path)?));
        let mut rdr = grep_cli::CommandReaderBuilder::new()
            .build(&mut cmd)
            .map_err(|e| {
                std::io::Error::other(format!(
                    "preprocessor command could not start: '{cmd:?}': {e}"
                ))
            })?;
        let result = search_into(m, s, p, shown, Source::Reader(&mut rdr)).map_err(|e| {
            std::io::Error::other(format!("preprocessor command failed: '{cmd:?}': {e}"))
        });
        let closed = rdr.close();
        let r = result?;
        closed?;
        return Ok(r);
    }
    if let Some(d) = plan
        .decompress
        .as_ref()
        .filter(|d| d.get_matcher().has_command(&hay.path))
    {
        let mut rdr = d.build(&hay.path)?;
        let result = search_into(m, s, p, shown, Source::Reader(&mut rdr));
        let closed = rdr.close();
        let r = result?;
        closed?;
        return Ok(r);
    }
    search_into(m, s, p, shown, Source::Path(&hay.path))
}

/// What the searches found: whether anything matched, the total
/// statistics, and whether a search failed.
type Outcome = (bool, Option<Stats>, bool);

/// What searching one haystack printed and found.
struct Done {
    bytes: Vec<u8>,
    result: std::io::Result<(bool, Option<Stats>)>,
}

/// Runs the command line; returns rg's exit status. `candidates` are the
/// index's answer, when the caller has it and [`scans`] is false.
pub fn run(cli: &Cli, candidates: Option<Candidates>) -> i32 {
    if let Some(kind) = cli.rg.generate {
        return generate(kind);
    }
    let started = std::time::Instant::now();
    let plan = match Plan::new(cli) {
        Ok(p) => p,
        Err(BadFlag(m)) => {
            error(m);
            return 2;
        }
    };
    if cli.rg.type_list {
        return type_list(cli);
    }
    if cli.rg.pcre2_version {
        let (major, minor) = grep_pcre2::version();
        let jit = if grep_pcre2::is_jit_available() {
            "available"
        } else {
            "unavailable"
        };
        println!("PCRE2 {major}.{minor} is available (JIT is {jit})");
        return 0;
    }
    if cli.files {
        return files(&plan, cli);
    }
    let matcher = match plan.matcher(cli) {
        Ok(m) => m,
        Err(e) => {
            error(e);
            return 2;
        }
    };
    // rg finds nothing without a pattern, or with `-m 0`.
    if (plan.patterns.is_empty() && !cli.invert_match) || cli.max_count == Some(0) {
        return 1;
    }
    let mut errors = Vec::new();
    // A scan in path order, with no stdin and no stop at the first match,
    // runs on the walk's threads, as rg's does.
    let in_walk_order = matches!(plan.sort, None | Some((SortBy::Path, false)));
    if candidates.is_none()
        && in_walk_order
        && (!plan.quiet || plan.stats)
        && !plan.paths.iter().any(|p| p.as_os_str() == "-")
    {
        let scanned = match &matcher {
            Engine::Rust(m) => scan_parallel(m, &plan, cli, &mut errors),
            Engine::Pcre2(m) => scan_parallel(m, &plan, cli, &mut errors),
        };
        return match scanned {
            Ok((searched, outcome)) => finish(&plan, started, searched, outcome, &errors),
            Err(BadFlag(m)) => {
                error(m);
                2
            }
        };
    }
    let haystacks = match candidates {
        Some((files, walk_errors)) => {
            errors.extend(walk_errors);
            files
                .into_iter()
                .filter(|(f, _)| plan.within_max_filesize(f))
                .map(|(f, _)| plan.haystack(f, false, false))
                .collect()
        }
        None => match walk(&plan, cli, &mut errors) {
            Ok(h) => h,
            Err(BadFlag(m)) => {
                error(m);
                return 2;
            }
        },
    };
    let haystacks = sort(&plan, haystacks);
    let searched = !haystacks.is_empty();
    let outcome = match &matcher {
        Engine::Rust(m) => search_all(m, &plan, cli, &haystacks, &mut errors),
        Engine::Pcre2(m) => search_all(m, &plan, cli, &haystacks, &mut errors),
    };
    finish(&plan, started, searched, outcome, &errors)
}

/// `--generate`: a man page (`clap_mangen`) or a shell's completions
/// (`clap_complete`) made from the flags' definitions, under the name the
/// program runs as (`rg` when installed as `rg`).
fn generate(kind: Generate) -> i32 {
    use clap::CommandFactory;
    use clap_complete::Shell;
    let name = prefix();
    let mut cmd = Cli::command().name(name).bin_name(name);
    let mut out = Vec::new();
    let shell = match kind {
        Generate::Man => None,
        Generate::CompleteBash => Some(Shell::Bash),
        Generate::CompleteZsh => Some(Shell::Zsh),
        Generate::CompleteFish => Some(Shell::Fish),
        Generate::CompletePowershell => Some(Shell::PowerShell),
    };
    let made = match shell {
        Some(shell) => {
            clap_complete::generate(shell, &mut cmd, name, &mut out);
            Ok(())
        }
        None => clap_mangen::Man::new(cmd).render(&mut out),
    };
    match made.and_then(|()| std::io::stdout().lock().write_all(&out)) {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            error(e);
            2
        }
    }
}

/// After the searches: errors, rg's warning when nothing was searched,
/// the statistics, and the exit status.
fn finish(
    plan: &Plan,
    started: std::time::Instant,
    searched: bool,
    (matched, total, failed): Outcome,
    errors: &[String],
) -> i32 {
    if plan.messages {
        for e in errors {
            error(e);
        }
    }
    if plan.implicit && !searched && plan.messages {
        error(
            "No files were searched, which means ripgrep probably applied a filter you didn't \
             expect.\nRunning with --debug will show why files are being skipped.",
        );
    }
    if let Some(stats) = total.filter(|_| plan.stats) {
        let mut out = std::io::stdout().lock();
        let _ = print_stats(plan.json, &stats, started, &mut out);
        let _ = out.flush();
    }
    let errored = failed || !errors.is_empty();
    if matched && (plan.quiet || !errored) {
        0
    } else if errored {
        2
    } else {
        1
    }
}

/// The haystacks of a walk, in path order, with the walk's errors added to
/// `errors` as rg words them.
fn walk(plan: &Plan, cli: &Cli, errors: &mut Vec<String>) -> Result<Vec<Haystack>, BadFlag> {
    let mut out = Vec::new();
    let mut stdin_paths = Vec::new();
    let mut walked = plan.paths.clone();
    walked.retain(|p| {
        let stdin = p.as_os_str() == "-";
        if stdin {
            stdin_paths.push(p.clone());
        }
        !stdin
    });
    if !stdin_paths.is_empty() {
        out.push(plan.haystack(PathBuf::from("-"), true, true));
    }
    if walked.is_empty() {
        return Ok(out);
    }
    for entry in plan.walk(cli, &walked)?.build() {
        match entry {
            Ok(e) => {
                // A bad line in an ignore file is said, and is no error.
                if let Some(err) = e.error()
                    && plan.messages
                    && plan.ignore_messages
                {
                    error(err);
                }
                out.extend(haystack_of(plan, e));
            }
            Err(e) => errors.push(e.to_string()),
        }
    }
    Ok(out)
}

/// The haystacks in the order `--sort`/`--sortr` ask for (path order
/// otherwise: the walk's, or the index's).
fn sort(plan: &Plan, mut hay: Vec<Haystack>) -> Vec<Haystack> {
    let Some((key, reverse)) = plan.sort else {
        return hay;
    };
    let time = |h: &Haystack| {
        let md = h.path.metadata().ok()?;
        match key {
            SortBy::Modified => md.modified().ok(),
            SortBy::Accessed => md.accessed().ok(),
            SortBy::Created => md.created().ok(),
            SortBy::Path | SortBy::None => None,
        }
    };
    match key {
        SortBy::None => {}
        SortBy::Path => {
            if reverse {
                hay.reverse();
            }
        }
        _ => {
            let mut keyed: Vec<_> = hay.into_iter().map(|h| (time(&h), h)).collect();
            // Files whose time cannot be read come last (first, reversed).
            keyed.sort_by(|(a, _), (b, _)| {
                let o = match (a, b) {
                    (Some(a), Some(b)) => a.cmp(b),
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    (None, None) => std::cmp::Ordering::Equal,
                };
                if reverse { o.reverse() } else { o }
            });
            hay = keyed.into_iter().map(|(_, h)| h).collect();
        }
    }
    hay
}

/// Writes searches' outputs to stdout in order, as rg joins them (its
/// file separator between two that printed), and keeps the tally.
struct Tally<'a> {
    plan: &'a Plan,
    out: std::io::StdoutLock<'static>,
    matched: bool,
    failed: bool,
    total: Stats,
    printed: bool,
}

impl<'a> Tally<'a> {
    fn new(plan: &'a Plan) -> Tally<'a> {
        Tally {
            plan,
            out: std::io::stdout().lock(),
            matched: false,
            failed: false,
            total: Stats::new(),
            printed: false,
        }
    }

    /// One haystack's search; `false` once stdout is closed.
    fn take(&mut self, d: Done, h: &Haystack, errors: &mut Vec<String>) -> bool {
        match d.result {
            Ok((found, stats)) => {
                self.matched |= found;
                if let Some(s) = stats {
                    self.total += &s;
                }
            }
            Err(e) => {
                self.failed = true;
                errors.push(format!("{}: {e}", h.shown.display()));
            }
        }
        if d.bytes.is_empty() {
            return true;
        }
        if self.printed
            && let Some(sep) = &self.plan.file_separator
            && self
                .out
                .write_all(sep)
                .and_then(|()| self.out.write_all(b"\n"))
                .is_err()
        {
            return false;
        }
        self.printed = true;
        self.out.write_all(&d.bytes).is_ok()
    }

    fn finish(mut self) -> Outcome {
        let _ = self.out.flush();
        (self.matched, Some(self.total), self.failed)
    }
}

/// Searches one haystack with a searcher and printer of a thread's own.
fn search_done<M: Matcher>(
    m: &M,
    s: &mut Searcher,
    p: &mut Printer,
    plan: &Plan,
    cli: &Cli,
    h: &Haystack,
) -> Done {
    p.buffer().clear();
    let result = search_one(m, s, p, plan, cli, h);
    Done {
        bytes: p.buffer().as_slice().to_vec(),
        result,
    }
}

/// Searches every haystack (in parallel unless one at a time is asked for)
/// and writes the outputs in order; whether something matched, the total
/// statistics, and whether a search failed.
fn search_all<M: Matcher + Sync>(
    m: &M,
    plan: &Plan,
    cli: &Cli,
    hay: &[Haystack],
    errors: &mut Vec<String>,
) -> Outcome {
    let quit_after_match = plan.quiet && !plan.stats;
    let mut tally = Tally::new(plan);
    if quit_after_match || hay.len() <= crate::search::SEQUENTIAL_MAX {
        let mut s = plan.searcher(cli);
        let mut p = plan.printer(cli);
        for h in hay {
            let d = search_done(m, &mut s, &mut p, plan, cli, h);
            if !tally.take(d, h, errors) || (tally.matched && quit_after_match) {
                break;
            }
        }
    } else {
        let done: Vec<Done> = hay
            .par_iter()
            .map_init(
                || (plan.searcher(cli), plan.printer(cli)),
                |(s, p), h| search_done(m, s, p, plan, cli, h),
            )
            .collect();
        for (d, h) in done.into_iter().zip(hay) {
            if !tally.take(d, h, errors) {
                break;
            }
        }
    }
    tally.finish()
}

/// A scan as rg's: the walk's threads search each file as they reach it
/// (rg's parallel walk), and the outputs are printed in path order (the
/// paths' order on the command line, then path order below each) once all
/// are done. Whether any file was searched, and [`search_all`]'s answer.
fn scan_parallel<M: Matcher + Sync>(
    m: &M,
    plan: &Plan,
    cli: &Cli,
    errors: &mut Vec<String>,
) -> Result<(bool, Outcome), BadFlag> {
    let found = std::sync::Mutex::new(Vec::<(usize, Vec<u8>, Haystack, Done)>::new());
    let walk_errors = std::sync::Mutex::new(Vec::<String>::new());
    let roots = &plan.paths;
    plan.walk(cli, roots)?.build_parallel().run(|| {
        let mut s = plan.searcher(cli);
        let mut p = plan.printer(cli);
        let (found, walk_errors) = (&found, &walk_errors);
        Box::new(move |entry| {
            let h = match entry {
                Ok(e) => {
                    if let Some(err) = e.error()
                        && plan.messages
                        && plan.ignore_messages
                    {
                        error(err);
                    }
                    match haystack_of(plan, e) {
                        Some(h) => h,
                        None => return ignore::WalkState::Continue,
                    }
                }
                Err(e) => {
                    walk_errors
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(e.to_string());
                    return ignore::WalkState::Continue;
                }
            };
            let d = search_done(m, &mut s, &mut p, plan, cli, &h);
            let root = match roots.len() {
                1 => 0,
                _ => roots
                    .iter()
                    .position(|r| h.path.starts_with(r))
                    .unwrap_or(usize::MAX),
            };
            let key = sort_key(&h.path);
            found
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((root, key, h, d));
            ignore::WalkState::Continue
        })
    });
    errors.extend(walk_errors.into_inner().unwrap_or_else(|e| e.into_inner()));
    let mut found = found.into_inner().unwrap_or_else(|e| e.into_inner());
    // Path order, by keys made on the walk's threads ([`sort_key`]):
    // comparing `Path`s here was 8% of a scan's CPU, on one thread.
    found.sort_unstable_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    let searched = !found.is_empty();
    let mut tally = Tally::new(plan);
    for (_, _, h, d) in found {
        if !tally.take(d, &h, errors) {
            break;
        }
    }
    Ok((searched, tally.finish()))
}

/// A key whose bytes sort as `path`'s components do, for paths as a walk
/// names them (no `.` or empty components past the root): its bytes, with
/// `/` as NUL, which no path holds, so below every other byte.
fn sort_key(path: &Path) -> Vec<u8> {
    let mut key = path.as_os_str().as_bytes().to_vec();
    key.iter_mut().filter(|b| **b == b'/').for_each(|b| *b = 0);
    key
}

/// The haystack a walk's entry is, if it is one: a file, or a path named
/// on the command line that is not a folder.
fn haystack_of(plan: &Plan, e: ignore::DirEntry) -> Option<Haystack> {
    let is_dir =
        e.file_type().is_some_and(|t| t.is_dir()) || (e.path_is_symlink() && e.path().is_dir());
    let explicit = e.depth() == 0 && !is_dir;
    (explicit || e.file_type().is_some_and(|t| t.is_file()))
        .then(|| plan.haystack(e.into_path(), explicit, false))
}

/// rg's `--stats` block, or its closing JSON summary.
fn print_stats(
    json: bool,
    stats: &Stats,
    started: std::time::Instant,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let elapsed = started.elapsed();
    if json {
        return out.write_all(&crate::search::summary_line(stats, elapsed));
    }
    write!(
        out,
        "\n{} matches\n{} matched lines\n{} files contained matches\n{} files searched\n\
         {} bytes printed\n{} bytes searched\n{:0.6} seconds spent searching\n\
         {:0.6} seconds total\n",
        stats.matches(),
        stats.matched_lines(),
        stats.searches_with_match(),
        stats.searches(),
        stats.bytes_printed(),
        stats.bytes_searched(),
        stats.elapsed().as_secs_f64(),
        elapsed.as_secs_f64(),
    )
}

/// `--files`: the paths a search would read, as rg prints them (`-0`,
/// `--path-separator`, colours, `-q`).
fn files(plan: &Plan, cli: &Cli) -> i32 {
    let mut errors = Vec::new();
    let hay = match walk(plan, cli, &mut errors) {
        Ok(h) => sort(plan, h),
        Err(BadFlag(m)) => {
            error(m);
            return 2;
        }
    };
    let out = termcolor::BufferedStandardStream::stdout(if plan.color {
        termcolor::ColorChoice::AlwaysAnsi
    } else {
        termcolor::ColorChoice::Never
    });
    let mut p = grep_printer::PathPrinterBuilder::new()
        .color_specs(plan.colors.clone())
        .hyperlink(plan.hyperlink.clone())
        .separator(plan.path_separator)
        .terminator(if plan.null { b'\x00' } else { b'\n' })
        .build(out);
    for h in hay.iter().take(if plan.quiet { 0 } else { usize::MAX }) {
        // A closed pipe ends the list quietly.
        if p.write(&h.shown).is_err() {
            return 0;
        }
    }
    drop(p);
    if plan.messages {
        for e in &errors {
            error(e);
        }
    }
    match (hay.is_empty(), errors.is_empty()) {
        (false, true) => 0,
        (false, false) if plan.quiet => 0,
        (_, false) => 2,
        (true, true) => 1,
    }
}

/// `--type-list`: every type and its globs, after `--type-add` and
/// `--type-clear`.
fn type_list(cli: &Cli) -> i32 {
    let mut types = ignore::types::TypesBuilder::new();
    types.add_defaults();
    for name in &cli.rg.type_clear {
        types.clear(name);
    }
    for def in &cli.rg.type_add {
        if let Err(e) = types.add_def(def) {
            error(e);
            return 2;
        }
    }
    let mut out = std::io::stdout().lock();
    let defs = types.definitions();
    for d in &defs {
        let line = format!("{}: {}\n", d.name(), d.globs().join(", "));
        if out.write_all(line.as_bytes()).is_err() {
            return 0;
        }
    }
    let _ = out.flush();
    i32::from(defs.is_empty())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    #[test]
    fn paths_sort_by_their_components() {
        let names = [
            "a-b", "a/b", "a", "a/b/c", "a.b", "ab", "a/c", "b", "a/b-c", "a/\u{e9}",
        ];
        let mut paths: Vec<&Path> = names.into_iter().map(Path::new).collect();
        let mut by_path = paths.clone();
        by_path.sort();
        paths.sort_by_key(|p| super::sort_key(p));
        assert_eq!(paths, by_path);
    }
}
