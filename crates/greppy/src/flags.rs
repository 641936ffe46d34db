//! The command line's flags: rg's, with rg's defaults and meanings, and
//! how `-e`, `-f`, `-F` and `-x` fold into the patterns a search runs.

use clap::Parser;
use std::path::PathBuf;

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
    args_override_self = true,
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
    #[arg(required_unless_present_any = ["regexps", "files", "pattern_files", "type_list", "pcre2_version", "generate"])]
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
    #[arg(
        short = 'A',
        long = "after-context",
        value_name = "N",
        overrides_with = "passthru"
    )]
    pub after: Option<usize>,
    /// Lines of context before each match.
    #[arg(
        short = 'B',
        long = "before-context",
        value_name = "N",
        overrides_with = "passthru"
    )]
    pub before: Option<usize>,
    /// Lines of context around each match.
    #[arg(
        short = 'C',
        long = "context",
        value_name = "N",
        overrides_with = "passthru"
    )]
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
    /// The rest of rg's flags.
    #[command(flatten)]
    pub rg: RgFlags,
    /// Every pattern, after `-e`, `-f` and the first word ([`Cli::resolve`]),
    /// each as given.
    #[arg(skip)]
    pub patterns: Vec<String>,
    /// Whether `-F` was given ([`Cli::resolve`] may fold it into the
    /// pattern).
    #[arg(skip)]
    pub fixed_given: bool,
    /// Whether `-x` was given ([`Cli::resolve`] folds it into the pattern).
    #[arg(skip)]
    pub line_given: bool,
    /// Whether `-w` was given.
    #[arg(skip)]
    pub word_given: bool,
}

/// `--sort` and `--sortr`: rg's keys. Without either, files are printed
/// in path order (rg's order is its walk's, which varies).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SortBy {
    Path,
    Modified,
    Accessed,
    Created,
    None,
}

/// `--generate`: rg's kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Generate {
    Man,
    CompleteBash,
    CompleteZsh,
    CompleteFish,
    CompletePowershell,
}

/// `--engine`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EngineChoice {
    Default,
    Pcre2,
    Auto,
}

impl RgFlags {
    /// The engine the flags choose (the last of `-P`, `--no-pcre2`,
    /// `--engine` and `--auto-hybrid-regex` wins).
    pub fn engine(&self) -> EngineChoice {
        if self.pcre2 {
            EngineChoice::Pcre2
        } else if self.auto_hybrid_regex {
            EngineChoice::Auto
        } else {
            self.engine.unwrap_or(EngineChoice::Default)
        }
    }
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum When {
    /// On a terminal.
    Auto,
    Always,
    /// `always`, with ANSI escapes (rg's name for Windows' sake).
    Ansi,
    Never,
}

impl Cli {
    /// Folds `-e` and `-x` into the one pattern the search runs, as rg
    /// does: the patterns as alternatives (each escaped first with `-F`),
    /// and a whole line around them. With `-e`, the first word is a path.
    pub fn resolve(&mut self) -> Result<(), String> {
        let mut patterns = std::mem::take(&mut self.regexps);
        self.fixed_given = self.fixed_strings;
        self.line_given = self.line_regexp;
        self.word_given = self.word_regexp;
        if self.files || self.rg.type_list || self.rg.pcre2_version || self.rg.generate.is_some() {
            // No pattern: every word is a path.
            patterns.clear();
            if let Some(first) = self.pattern.take() {
                self.paths.insert(0, PathBuf::from(first));
            }
            return Ok(());
        }
        if !patterns.is_empty() || !self.rg.pattern_files.is_empty() {
            if let Some(first) = self.pattern.take() {
                self.paths.insert(0, PathBuf::from(first));
            }
        } else {
            patterns.extend(self.pattern.take());
        }
        for f in &self.rg.pattern_files {
            let read = if f.as_os_str() == "-" {
                grep_cli::patterns_from_stdin()
            } else {
                grep_cli::patterns_from_path(f)
            };
            patterns.extend(read.map_err(|e| e.to_string())?);
        }
        // rg searches each pattern once.
        let mut seen = std::collections::HashSet::new();
        patterns.retain(|p| seen.insert(p.clone()));
        self.patterns.clone_from(&patterns);
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
        Ok(())
    }

    /// The walk's filters these flags ask for (`-g`, `-t`, `--hidden`,
    /// `--max-depth`).
    pub fn filters(&self) -> crate::search::Filters {
        crate::search::Filters {
            globs: self.globs.clone(),
            types: self.types.clone(),
            hidden: self.hidden,
            max_depth: self.max_depth,
        }
    }

    /// The pattern the search runs ([`Cli::resolve`]).
    pub fn pattern(&self) -> String {
        self.pattern.clone().unwrap_or_default()
    }
}

/// rg's flags beyond the ones every search of the index takes. A command
/// line that uses any of them is searched by `full.rs`, which
/// configures rg's own walker, searcher and printers from them; the index
/// still names the candidates where these flags leave them as they are.
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args)]
pub struct RgFlags {
    /// Read patterns from PATTERNFILE, one a line (`-`: standard input);
    /// repeatable, and with `-e`.
    #[arg(short = 'f', long = "file", value_name = "PATTERNFILE")]
    pub pattern_files: Vec<PathBuf>,
    /// Print REPLACEMENT in place of each match (`$1`, `${name}` for
    /// groups).
    #[arg(
        short = 'r',
        long,
        value_name = "REPLACEMENT",
        allow_hyphen_values = true
    )]
    pub replace: Option<String>,
    /// Trim leading ASCII whitespace from printed lines.
    #[arg(long, overrides_with = "no_trim")]
    pub trim: bool,
    #[arg(long, hide = true, overrides_with = "trim")]
    pub no_trim: bool,
    /// Print the column of the first match (implies -n).
    #[arg(long, overrides_with = "no_column")]
    pub column: bool,
    #[arg(long, hide = true, overrides_with = "column")]
    pub no_column: bool,
    /// Every match on its own line, as `path:line:column:text`.
    #[arg(long)]
    pub vimgrep: bool,
    /// A NUL byte after each path, not `:` or a newline.
    #[arg(short = '0', long)]
    pub null: bool,
    /// Lines end with NUL, not with a newline.
    #[arg(long)]
    pub null_data: bool,
    /// Print the path with each match, even for one file.
    #[arg(short = 'H', long, overrides_with = "no_filename")]
    pub with_filename: bool,
    /// Never print paths.
    #[arg(short = 'I', long, overrides_with = "with_filename")]
    pub no_filename: bool,
    /// Paths above their matches (the default on a terminal).
    #[arg(long, overrides_with = "no_heading")]
    pub heading: bool,
    /// Paths on each line.
    #[arg(long, overrides_with = "heading")]
    pub no_heading: bool,
    /// Print nothing; the exit status says whether something matched.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Totals after the results.
    #[arg(long, overrides_with = "no_stats")]
    pub stats: bool,
    #[arg(long, hide = true, overrides_with = "stats")]
    pub no_stats: bool,
    /// What separates blocks of context (default `--`; escapes as in rg).
    #[arg(
        long,
        value_name = "SEPARATOR",
        allow_hyphen_values = true,
        overrides_with = "no_context_separator"
    )]
    pub context_separator: Option<String>,
    /// No separator between blocks of context.
    #[arg(long, overrides_with = "context_separator")]
    pub no_context_separator: bool,
    /// What follows the path and numbers of a matching line (default `:`).
    #[arg(long, value_name = "SEPARATOR", allow_hyphen_values = true)]
    pub field_match_separator: Option<String>,
    /// What follows the path and numbers of a context line (default `-`).
    #[arg(long, value_name = "SEPARATOR", allow_hyphen_values = true)]
    pub field_context_separator: Option<String>,
    /// Lines longer than NUM bytes are left out (0: no limit).
    #[arg(short = 'M', long, value_name = "NUM")]
    pub max_columns: Option<u64>,
    /// With -M, print the start of a long line, not nothing.
    #[arg(long, overrides_with = "no_max_columns_preview")]
    pub max_columns_preview: bool,
    #[arg(long, hide = true, overrides_with = "max_columns_preview")]
    pub no_max_columns_preview: bool,
    /// Print the byte offset of each line (of each match, with -o).
    #[arg(short = 'b', long, overrides_with = "no_byte_offset")]
    pub byte_offset: bool,
    #[arg(long, hide = true, overrides_with = "byte_offset")]
    pub no_byte_offset: bool,
    /// Print every line, matching or not.
    #[arg(long, alias = "passthrough", overrides_with_all = ["after", "before", "context"])]
    pub passthru: bool,
    /// With -c, print files with no match too.
    #[arg(long, overrides_with = "no_include_zero")]
    pub include_zero: bool,
    #[arg(long, hide = true, overrides_with = "include_zero")]
    pub no_include_zero: bool,
    /// Colour settings (`match:fg:red`, as rg takes them); repeatable.
    #[arg(long, value_name = "COLOR_SPEC")]
    pub colors: Vec<String>,
    /// Print the paths of files with no match.
    #[arg(long)]
    pub files_without_match: bool,
    /// Stop reading a file at the first non-matching line after a match.
    #[arg(long)]
    pub stop_on_nonmatch: bool,
    /// Lines may end with CRLF: `$` matches before the CR.
    #[arg(long, overrides_with = "no_crlf")]
    pub crlf: bool,
    #[arg(long, hide = true, overrides_with = "crlf")]
    pub no_crlf: bool,
    /// The regex's DFA cache size (`10M`, as rg takes it).
    #[arg(long, value_name = "NUM+SUFFIX?")]
    pub dfa_size_limit: Option<String>,
    /// The compiled regex's size limit.
    #[arg(long, value_name = "NUM+SUFFIX?")]
    pub regex_size_limit: Option<String>,
    /// With -U, `.` matches newlines.
    #[arg(long, overrides_with = "no_multiline_dotall")]
    pub multiline_dotall: bool,
    #[arg(long, hide = true, overrides_with = "multiline_dotall")]
    pub no_multiline_dotall: bool,
    /// Search binary files as text (scans).
    #[arg(short = 'a', long, overrides_with_all = ["no_text", "binary"])]
    pub text: bool,
    #[arg(long, hide = true, overrides_with = "text")]
    pub no_text: bool,
    /// Search binary files met in the walk, and say where they match
    /// (scans).
    #[arg(long, overrides_with_all = ["no_binary", "text"])]
    pub binary: bool,
    #[arg(long, hide = true, overrides_with = "binary")]
    pub no_binary: bool,
    /// Classes and case rules in ASCII only.
    #[arg(long, overrides_with = "unicode")]
    pub no_unicode: bool,
    #[arg(long, hide = true, overrides_with = "no_unicode")]
    pub unicode: bool,
    /// `--color always --heading --line-number`.
    #[arg(short = 'p', long)]
    pub pretty: bool,
    /// Flush after each line (rg's hint; greppy writes each file whole).
    #[arg(long, overrides_with = "block_buffered")]
    pub line_buffered: bool,
    /// Flush in blocks (rg's hint).
    #[arg(long, overrides_with = "line_buffered")]
    pub block_buffered: bool,
    /// No error messages about files that cannot be read.
    #[arg(long, overrides_with = "messages")]
    pub no_messages: bool,
    #[arg(long, hide = true, overrides_with = "no_messages")]
    pub messages: bool,
    /// No error messages about ignore files that do not parse.
    #[arg(long, overrides_with = "ignore_messages")]
    pub no_ignore_messages: bool,
    #[arg(long, hide = true, overrides_with = "no_ignore_messages")]
    pub ignore_messages: bool,
    /// Leave out files of this type; repeatable.
    #[arg(short = 'T', long = "type-not", value_name = "TYPE")]
    pub types_not: Vec<String>,
    /// Add a type (`name:glob`, or `name:include:other,…`); repeatable
    /// (scans).
    #[arg(long = "type-add", value_name = "TYPESPEC")]
    pub type_add: Vec<String>,
    /// Forget a type's globs; repeatable (scans).
    #[arg(long = "type-clear", value_name = "TYPE")]
    pub type_clear: Vec<String>,
    /// Print every type and its globs.
    #[arg(long)]
    pub type_list: bool,
    /// `-g` without regard to case; repeatable (scans).
    #[arg(long = "iglob", value_name = "GLOB")]
    pub iglobs: Vec<String>,
    /// Every `-g` without regard to case (scans).
    #[arg(long, overrides_with = "no_glob_case_insensitive")]
    pub glob_case_insensitive: bool,
    #[arg(long, hide = true, overrides_with = "glob_case_insensitive")]
    pub no_glob_case_insensitive: bool,
    /// Search ignored files too (scans).
    #[arg(long, overrides_with = "ignore")]
    pub no_ignore: bool,
    #[arg(long, hide = true, overrides_with = "no_ignore")]
    pub ignore: bool,
    /// Disregard `.ignore` and `.rgignore` (scans).
    #[arg(long, overrides_with = "ignore_dot")]
    pub no_ignore_dot: bool,
    #[arg(long, hide = true, overrides_with = "no_ignore_dot")]
    pub ignore_dot: bool,
    /// Disregard git's ignore files (scans).
    #[arg(long, overrides_with = "ignore_vcs")]
    pub no_ignore_vcs: bool,
    #[arg(long, hide = true, overrides_with = "no_ignore_vcs")]
    pub ignore_vcs: bool,
    /// Disregard ignore files in parent folders (scans).
    #[arg(long, overrides_with = "ignore_parent")]
    pub no_ignore_parent: bool,
    #[arg(long, hide = true, overrides_with = "no_ignore_parent")]
    pub ignore_parent: bool,
    /// Disregard `.git/info/exclude` (scans).
    #[arg(long, overrides_with = "ignore_exclude")]
    pub no_ignore_exclude: bool,
    #[arg(long, hide = true, overrides_with = "no_ignore_exclude")]
    pub ignore_exclude: bool,
    /// Disregard git's global excludes file (scans).
    #[arg(long, overrides_with = "ignore_global")]
    pub no_ignore_global: bool,
    #[arg(long, hide = true, overrides_with = "no_ignore_global")]
    pub ignore_global: bool,
    /// Disregard `--ignore-file` (scans).
    #[arg(long, overrides_with = "ignore_files")]
    pub no_ignore_files: bool,
    #[arg(long, hide = true, overrides_with = "no_ignore_files")]
    pub ignore_files: bool,
    /// Apply git's ignore files outside a git repository too (scans).
    #[arg(long, overrides_with = "require_git")]
    pub no_require_git: bool,
    #[arg(long, hide = true, overrides_with = "no_require_git")]
    pub require_git: bool,
    /// `-u`: --no-ignore; `-uu`: and --hidden; `-uuu`: and --binary
    /// (scans).
    #[arg(short = 'u', long = "unrestricted", action = clap::ArgAction::Count)]
    pub unrestricted: u8,
    /// Follow symbolic links (scans).
    #[arg(short = 'L', long, overrides_with = "no_follow")]
    pub follow: bool,
    #[arg(long, hide = true, overrides_with = "follow")]
    pub no_follow: bool,
    /// Skip files larger than NUM (`K`, `M`, `G` suffixes) (scans).
    #[arg(long, value_name = "NUM+SUFFIX?")]
    pub max_filesize: Option<String>,
    /// Another ignore file, in gitignore's format; repeatable (scans).
    #[arg(long = "ignore-file", value_name = "PATH")]
    pub ignore_file: Vec<PathBuf>,
    /// Ignore files' globs without regard to case (scans).
    #[arg(long, overrides_with = "no_ignore_file_case_insensitive")]
    pub ignore_file_case_insensitive: bool,
    #[arg(long, hide = true, overrides_with = "ignore_file_case_insensitive")]
    pub no_ignore_file_case_insensitive: bool,
    /// Do not cross into other file systems (scans).
    #[arg(long, overrides_with = "no_one_file_system")]
    pub one_file_system: bool,
    #[arg(long, hide = true, overrides_with = "one_file_system")]
    pub no_one_file_system: bool,
    /// Like --sort, in reverse.
    #[arg(long, value_enum, value_name = "SORTBY")]
    pub sortr: Option<crate::flags::SortBy>,
    /// `--sort path` (rg's old flag).
    #[arg(long, hide = true)]
    pub sort_files: bool,
    /// Read files in this encoding (`auto`: a BOM decides; `none`: raw
    /// bytes) (scans).
    #[arg(
        short = 'E',
        long,
        value_name = "ENCODING",
        overrides_with = "no_encoding"
    )]
    pub encoding: Option<String>,
    #[arg(long, hide = true, overrides_with = "encoding")]
    pub no_encoding: bool,
    /// Search compressed files (gzip, bzip2, xz, lz4, zstd, …) through
    /// their tools (scans).
    #[arg(short = 'z', long, overrides_with = "no_search_zip")]
    pub search_zip: bool,
    #[arg(long, hide = true, overrides_with = "search_zip")]
    pub no_search_zip: bool,
    /// Search what COMMAND prints for each file (scans).
    #[arg(long, value_name = "COMMAND", overrides_with = "no_pre")]
    pub pre: Option<PathBuf>,
    #[arg(long, hide = true, overrides_with = "pre")]
    pub no_pre: bool,
    /// Only files matching GLOB go through --pre; repeatable.
    #[arg(long = "pre-glob", value_name = "GLOB")]
    pub pre_globs: Vec<String>,
    /// Use PCRE2 (look-around, backreferences) (scans).
    #[arg(short = 'P', long, overrides_with_all = ["no_pcre2", "engine", "auto_hybrid_regex", "no_auto_hybrid_regex"])]
    pub pcre2: bool,
    #[arg(long, hide = true, overrides_with_all = ["pcre2", "engine", "auto_hybrid_regex", "no_auto_hybrid_regex"])]
    pub no_pcre2: bool,
    /// The regex engine: `default`, `pcre2`, or `auto` (PCRE2 for what the
    /// default engine cannot compile).
    #[arg(long, value_enum, value_name = "ENGINE", overrides_with_all = ["pcre2", "no_pcre2", "auto_hybrid_regex", "no_auto_hybrid_regex"])]
    pub engine: Option<EngineChoice>,
    /// `--engine auto` (rg's older flag).
    #[arg(long, overrides_with_all = ["pcre2", "no_pcre2", "engine", "no_auto_hybrid_regex"])]
    pub auto_hybrid_regex: bool,
    #[arg(long, hide = true, overrides_with_all = ["pcre2", "no_pcre2", "engine", "auto_hybrid_regex"])]
    pub no_auto_hybrid_regex: bool,
    /// `--no-unicode` for PCRE2 (rg's older flag).
    #[arg(long, hide = true, overrides_with = "pcre2_unicode")]
    pub no_pcre2_unicode: bool,
    /// Print PCRE2's version, and whether its JIT is available.
    #[arg(long)]
    pub pcre2_version: bool,
    /// Print a man page or a shell's completions for these flags, under
    /// the name the program runs as.
    #[arg(long, value_name = "KIND")]
    pub generate: Option<Generate>,
    /// Do not read `RIPGREP_CONFIG_PATH`.
    #[arg(long)]
    pub no_config: bool,
    /// Hyperlinks in the output (rg's format names and templates).
    #[arg(long, value_name = "FORMAT")]
    pub hyperlink_format: Option<String>,
    /// Negations of flags above (rg's `--no-` forms): the last one given
    /// wins.
    #[arg(long, hide = true, overrides_with = "fixed_strings")]
    pub no_fixed_strings: bool,
    #[arg(long, hide = true, overrides_with = "hidden")]
    pub no_hidden: bool,
    #[arg(long, hide = true, overrides_with = "invert_match")]
    pub no_invert_match: bool,
    #[arg(long, hide = true, overrides_with = "json")]
    pub no_json: bool,
    #[arg(long, hide = true, overrides_with = "multiline")]
    pub no_multiline: bool,
    #[arg(long, hide = true, overrides_with = "sort_files")]
    pub no_sort_files: bool,
    #[arg(long, hide = true, overrides_with = "no_pcre2_unicode")]
    pub pcre2_unicode: bool,
    #[arg(long, hide = true, overrides_with = "block_buffered")]
    pub no_block_buffered: bool,
    #[arg(long, hide = true, overrides_with = "line_buffered")]
    pub no_line_buffered: bool,
    /// A program that prints this machine's name, for hyperlinks.
    #[arg(long, value_name = "COMMAND")]
    pub hostname_bin: Option<PathBuf>,
    /// rg's debug output (accepted; greppy prints none).
    #[arg(long, hide = true)]
    pub debug: bool,
    /// rg's trace output (accepted; greppy prints none).
    #[arg(long, hide = true)]
    pub trace: bool,
}

/// The arguments of rg's config file (`RIPGREP_CONFIG_PATH`), to go
/// before the command line's: one a line, blank lines and `#` comments
/// left out, each line trimmed. A file that cannot be read is reported
/// (as `prefix: message`) and gives none, as in rg.
pub fn config_args(prefix: &str) -> Vec<std::ffi::OsString> {
    use std::os::unix::ffi::OsStrExt;
    let Some(path) = std::env::var_os("RIPGREP_CONFIG_PATH").filter(|p| !p.is_empty()) else {
        return Vec::new();
    };
    let text = match std::fs::read(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!(
                "{prefix}: failed to read the file specified in RIPGREP_CONFIG_PATH: {}: {e}",
                std::path::Path::new(&path).display()
            );
            return Vec::new();
        }
    };
    text.split(|b| *b == b'\n')
        .map(|l| l.trim_ascii())
        .filter(|l| !l.is_empty() && l[0] != b'#')
        .map(|l| std::ffi::OsStr::from_bytes(l).to_os_string())
        .collect()
}
