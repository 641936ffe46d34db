//! The shell's state and the executor that walks the syntax tree.
//!
//! External commands are started with `sys::spawn` (vfork semantics) and waited for with a
//! blocking wait4. Output is never captured except by command substitution,
//! which reads a pipe (or, for safe builtins, a buffer, with no fork).

use crate::ast::*;
use crate::parse::{Aliases, ParseError, Parser, Source};
use crate::perf::Perf;
use crate::sys;
use crate::vars::Value;
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeSet;
use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::rc::Rc;

/// How control leaves a command other than by finishing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Break(u32),
    Continue(u32),
    Return(i32),
    /// Leave the shell (or the subshell) with this status.
    Exit(i32),
    /// Ctrl-C in an interactive shell with no SIGINT trap: abandon the
    /// command, back to the prompt.
    Interrupt,
    /// An error that ends a non-interactive shell (`set -u`, a bad
    /// substitution) in an interactive one: the rest of the line is
    /// abandoned, with this status, and the shell goes on (bash).
    Abort(i32),
}

pub type Exec = Result<i32, Flow>;

/// `set` options.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `set -B` (bash, on by default): brace expansion.
    pub braceexpand: bool,
    pub allexport: bool,
    pub errexit: bool,
    pub noglob: bool,
    pub hashall: bool,
    pub noexec: bool,
    pub nounset: bool,
    pub verbose: bool,
    pub xtrace: bool,
    pub noclobber: bool,
    pub pipefail: bool,
    pub monitor: bool,
    pub notify: bool,
    pub ignoreeof: bool,
    pub vi: bool,
    pub emacs: bool,
    pub posix: bool,
    pub nolog: bool,
    /// `set -E`: functions, substitutions and subshells inherit the ERR trap.
    pub errtrace: bool,
    /// `set -T`: they inherit the DEBUG and RETURN traps.
    pub functrace: bool,
    pub histexpand: bool,
    pub history: bool,
    pub interactive_comments: bool,
    pub keyword: bool,
    pub onecmd: bool,
    pub physical: bool,
    pub privileged: bool,
    /// `set -r`, `-r`, or started as `rbash`: the restricted shell (no
    /// `cd`, no `/` in command names, no output redirections, ...), which
    /// `set +r` cannot turn off.
    pub restricted: bool,
    pub interactive: bool,
    /// Commands came from `-c`.
    pub command_mode: bool,
    /// Commands come from stdin (`-s`).
    pub stdin_mode: bool,
}

/// Long names for `set -o`, with their single letters.
pub const OPTION_NAMES: &[(&str, Option<char>)] = &[
    ("allexport", Some('a')),
    ("braceexpand", Some('B')),
    ("emacs", None),
    ("errexit", Some('e')),
    ("errtrace", Some('E')),
    ("functrace", Some('T')),
    ("hashall", Some('h')),
    ("histexpand", Some('H')),
    ("history", None),
    ("ignoreeof", None),
    ("interactive-comments", None),
    ("keyword", Some('k')),
    ("monitor", Some('m')),
    ("noclobber", Some('C')),
    ("noexec", Some('n')),
    ("noglob", Some('f')),
    ("nolog", None),
    ("notify", Some('b')),
    ("nounset", Some('u')),
    ("onecmd", Some('t')),
    ("physical", Some('P')),
    ("pipefail", None),
    ("posix", None),
    ("privileged", Some('p')),
    ("verbose", Some('v')),
    ("vi", None),
    ("xtrace", Some('x')),
];

impl Options {
    pub fn get_mut(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "allexport" => &mut self.allexport,
            "braceexpand" => &mut self.braceexpand,
            "errexit" => &mut self.errexit,
            "noglob" => &mut self.noglob,
            "hashall" => &mut self.hashall,
            "noexec" => &mut self.noexec,
            "nounset" => &mut self.nounset,
            "verbose" => &mut self.verbose,
            "xtrace" => &mut self.xtrace,
            "noclobber" => &mut self.noclobber,
            "pipefail" => &mut self.pipefail,
            "monitor" => &mut self.monitor,
            "notify" => &mut self.notify,
            "ignoreeof" => &mut self.ignoreeof,
            "vi" => &mut self.vi,
            "emacs" => &mut self.emacs,
            "posix" => &mut self.posix,
            "nolog" => &mut self.nolog,
            "errtrace" => &mut self.errtrace,
            "functrace" => &mut self.functrace,
            "histexpand" => &mut self.histexpand,
            "history" => &mut self.history,
            "interactive-comments" => &mut self.interactive_comments,
            "keyword" => &mut self.keyword,
            "onecmd" => &mut self.onecmd,
            "physical" => &mut self.physical,
            "privileged" => &mut self.privileged,
            _ => return None,
        })
    }

    pub fn get(&self, name: &str) -> Option<bool> {
        let mut c = self.clone();
        c.get_mut(name).map(|b| *b)
    }

    /// The long name of a single-letter option.
    pub fn letter(c: char) -> Option<&'static str> {
        OPTION_NAMES
            .iter()
            .find(|(_, l)| *l == Some(c))
            .map(|(n, _)| *n)
    }

    /// `$-`, as bash writes it: the single-letter options that are on, in
    /// bash's order (`himBHs` for an interactive shell, `hBc` for `-c`),
    /// with `c` for a command string and `s` for commands from stdin.
    pub fn flags_string(&self) -> String {
        let mut s = String::new();
        for l in "abefhikmnprtuvxBCEHPT".chars() {
            let on = match l {
                'i' => self.interactive,
                'r' => self.restricted,
                l => Options::letter(l).is_some_and(|name| self.get(name) == Some(true)),
            };
            if on {
                s.push(l);
            }
        }
        if self.command_mode {
            s.push('c');
        }
        if self.stdin_mode {
            s.push('s');
        }
        s
    }
}

/// A coprocess the shell started, until it is reaped.
#[derive(Debug)]
pub struct Coproc {
    pub pid: i32,
    pub name: Vec<u8>,
    /// The shell's ends (read its output, write its input), with the pipe
    /// each was: the user may close or move them (`exec 60>&-`), and a
    /// number that now names something else is not closed at the end.
    pub fds: [(RawFd, (u64, u64)); 2],
}

/// Closes a coprocess's ends that are still the pipes they were.
fn close_coproc_ends(c: &Coproc) {
    for &(fd, id) in &c.fds {
        if file_id(fd) == Some(id) {
            // SAFETY: `fd` is the coprocess's pipe end, which the shell
            // opened and nothing else owns.
            unsafe { libc::close(fd) };
        }
    }
}

/// The (device, inode) of what `fd` is open on.
fn file_id(fd: RawFd) -> Option<(u64, u64)> {
    // SAFETY: fstat fills the struct it is given, on an fd number.
    let st = unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        (libc::fstat(fd, &mut st) == 0).then_some(st)?
    };
    Some((st.st_dev, st.st_ino))
}

/// A background job.
#[derive(Debug, Clone)]
pub struct Job {
    pub id: usize,
    pub pids: Vec<i32>,
    /// Raw wait statuses of the pids that finished.
    pub done: HashMap<i32, i32>,
    pub command: String,
    /// Its process group (job control), or 0.
    pub pgid: i32,
    /// Stopped, by this signal.
    pub stopped: Option<i32>,
    /// Started in the foreground (then stopped): `jobs` shows no `&`.
    pub foreground: bool,
    /// Its last change was reported (the notice before a prompt).
    pub notified: bool,
    /// `wait` returned its status (an interactive shell keeps it listed
    /// until reported).
    pub waited: bool,
}

impl Job {
    pub fn finished(&self) -> bool {
        self.pids.iter().all(|p| self.done.contains_key(p))
    }

    /// The job's status: its last process's.
    pub fn status(&self) -> Option<i32> {
        let last = self.pids.last()?;
        self.done.get(last).map(|&s| sys::status_of(s))
    }
}

/// fds saved while a redirection is in effect.
#[derive(Debug, Default)]
pub struct Saved {
    /// (fd, its saved copy, or None if it was closed before)
    fds: Vec<(RawFd, Option<RawFd>)>,
}

/// The shell.
#[derive(Debug)]
pub struct Shell {
    pub vars: crate::vars::Vars,
    /// The last value read of each dynamic variable that bash computes only
    /// when it is read ([`LISTED_AS_LAST_READ`]): listings show that, as
    /// bash's do.
    last_read: std::cell::RefCell<HashMap<Vec<u8>, Value>>,
    pub positional: Vec<Vec<u8>>,
    pub arg0: Vec<u8>,
    pub functions: HashMap<Vec<u8>, Rc<Function>>,
    pub aliases: Aliases,
    /// The empty table the parser gets while aliases are not expanded.
    no_aliases: Aliases,
    pub opts: Options,
    /// `$?`
    pub status: i32,
    /// `$!`
    pub last_bg: Option<i32>,
    /// `$$`: the main shell's pid, also in subshells.
    pub shell_pid: i32,
    /// Traps by signal number (0 = EXIT).
    pub traps: HashMap<i32, Vec<u8>>,
    pub jobs: Vec<Job>,
    pub loop_depth: u32,
    pub func_depth: u32,
    /// Added to the lines of the commands run: in a command substitution,
    /// bash counts its lines from the line of the command it is in (see
    /// [`Shell::command_sub`]).
    line_shift: i32,
    /// Names a function call's prefix assignments bound (`v=1 f`), with the
    /// depth of that call: in POSIX mode a special builtin's assignment to
    /// one of them reaches the caller too (bash).
    prefix_bound: Vec<(u32, Vec<u8>)>,
    /// The prefix assignments of the `exec` being run (`V=1 exec prog`),
    /// which go into the new program's environment.
    pub exec_env: Vec<(Vec<u8>, Vec<u8>)>,
    pub source_depth: u32,
    /// `set` gave new positional parameters outside a function since the
    /// innermost `source` began.
    pub set_changed_args: bool,
    /// `shopt -s extdebug`, kept here too so that a function call tests a
    /// bool instead of the option set.
    pub extdebug: bool,
    /// The shell's own arguments, kept from when `extdebug` was turned on
    /// (the bottom of `BASH_ARGV`).
    pub main_args: Option<Vec<Vec<u8>>>,
    /// Names bound by a function's call (`v=t f`) that `export` or
    /// `readonly` marked, with the call's depth: they outlast the call.
    propagate: Vec<(u32, Vec<u8>)>,
    /// A function was just called and its first command is expanding:
    /// bash's assignment errors then start with the function's name (the
    /// innermost frame's).
    pub fresh_call: bool,
    /// The builtin being run was called through `command`, which keeps a
    /// special builtin's error from ending a POSIX-mode script.
    pub via_command: bool,
    /// The line being run, for messages and `$LINENO`.
    pub line: u32,
    /// What to call the shell in messages.
    pub name: String,
    /// When set, builtins write their standard output here (in-process
    /// command substitution).
    pub capture: Option<Vec<u8>>,
    /// `hash`: command name to path.
    pub hash: HashMap<Vec<u8>, Hashed>,
    /// How many commands were ever hashed: the order of entries (bash
    /// lists a bucket's newest first).
    pub hash_seq: u64,
    pub shopts: BTreeSet<String>,
    pub perf: Option<Perf>,
    /// This process is a forked subshell: leaving means exiting.
    pub subshell: bool,
    /// Above 0 while running a condition, where `set -e` does not apply.
    pub errexit_off: u32,
    /// The status of the last command substitution (for `x=$(false)`).
    pub cmdsub_status: Option<i32>,
    /// The next external command may replace the shell (`-c` tail).
    pub tail_ok: bool,
    /// The EXIT trap already ran.
    exited: bool,
    /// `RANDOM`'s xorshift state, advanced on every read.
    random_state: std::cell::Cell<u32>,
    /// The last `RANDOM` given (bash never gives the same one twice in a row).
    random_last: std::cell::Cell<u32>,
    /// `BASH_SUBSHELL`: how many subshells deep this process is.
    pub subshell_level: u32,
    /// How many texts deep `set -x` is tracing: each eval, source, trap
    /// action and command substitution repeats PS4's first character once
    /// more, as bash's indirection level does.
    pub xtrace_level: u32,
    /// Children reaped since the SIGCHLD trap last ran: bash runs it once
    /// for each.
    pub chld_reaped: u32,
    /// The command whose arithmetic is being evaluated (`((`, `[[`,
    /// `let`): bash names it in an error, which fails only that command.
    pub arith_cmd: Option<&'static str>,
    /// The parameter whose `${x:off:len}` is being evaluated: bash names
    /// it in an arithmetic error.
    pub arith_name: Option<Vec<u8>>,
    /// How an error in an array subscript inside arithmetic ended
    /// (reported there), for the arithmetic to end so too.
    pub arith_flow: Option<Flow>,
    /// The last arithmetic failed in a subscript ([`Shell::arith_flow`]).
    pub subscript_failed: bool,
    /// An array index failed to evaluate: the [`Flow::Abort`] on its way
    /// throws away the text being run, not only the line (bash's
    /// `top_level_cleanup`): eval and source pass it on, and the top of
    /// `-c` leaves with it.
    pub discard_text: bool,
    /// The text of the arguments of the `unset`, `read`, `printf`, `wait`
    /// or `test` about to run that were written unquoted as elements
    /// (`unset a[$k]`): unset does not expand their subscripts again, the
    /// others take them as written under `assoc_expand_once`.
    pub literal_args: Vec<Vec<u8>>,
    /// Inside a compound command whose standard input is redirected: a
    /// background command there reads that, not /dev/null (bash).
    stdin_redirected: u32,
    /// Builtins that `enable -n` turned off.
    pub disabled_builtins: rustc_hash::FxHashSet<Vec<u8>>,
    /// The traps whose actions are running, innermost last (a trap does
    /// not run inside its own action; DEBUG and ERR do run inside the
    /// others', as in bash).
    running_traps: Vec<i32>,
    /// How many `eval`s are running (syntax errors name `eval`).
    pub eval_depth: u32,
    /// The simple command running now, innermost (`$BASH_COMMAND`). Set
    /// and restored by [`Shell::run_simple`], so it points only into a
    /// command whose borrow is live.
    current_simple: Option<std::ptr::NonNull<Simple>>,
    /// `$BASH_COMMAND` in a trap's action, and between commands: the
    /// command the DEBUG trap ran for, or (while any trap is set) the last
    /// simple command begun.
    bash_command: Vec<u8>,
    /// `getopts`: (OPTIND it last saw, position inside that argument).
    pub getopts_state: (usize, usize),
    /// The statuses of the last pipeline (`PIPESTATUS`).
    pub pipestatus: Vec<i32>,
    /// `$_`: the last argument of the last simple command.
    pub last_arg: Vec<u8>,
    /// The call stack, outermost first: each function call and `source`,
    /// under a `main` frame when running a script file (`FUNCNAME`,
    /// `BASH_SOURCE`, `BASH_LINENO`, `caller`).
    pub frames: Vec<Frame>,
    /// `pushd`'s saved directories, top first (the current one is not in
    /// it).
    pub dir_stack: Vec<Vec<u8>>,
    /// `complete`'s specifications, by command name (and bash's keys for
    /// `-D`, `-E`, `-I`).
    pub completions: HashMap<Vec<u8>, crate::builtins::CompSpec>,
    /// How many names have been given completion specifications.
    pub comp_seq: u64,
    /// The file each function was defined in (`BASH_SOURCE`).
    pub function_files: HashMap<Vec<u8>, Rc<[u8]>>,
    /// Functions with the trace attribute (`declare -ft`).
    pub traced: rustc_hash::FxHashSet<Vec<u8>>,
    /// Functions made read-only (`readonly -f`, `declare -fr`): they can
    /// be neither redefined nor unset.
    pub readonly_functions: rustc_hash::FxHashSet<Vec<u8>>,
    /// Where top-level code comes from when no frame says: `environment`
    /// for `-c`, `main` for standard input (bash's names).
    pub top_file: Rc<[u8]>,
    /// When the shell started (`SECONDS`).
    pub started: std::time::Instant,
    /// The DEBUG trap already ran for the next simple command (a pipeline
    /// element, in its child).
    debug_done: bool,
    /// Process substitutions of the commands being run: the shell's end of
    /// each pipe (closed when the command that named it ends) ...
    procsub_fds: Vec<OwnedFd>,
    /// ... and the children, reaped without blocking once they end.
    pub procsub_pids: Vec<i32>,
    /// Coprocesses not yet reaped.
    pub coprocs: Vec<Coproc>,
    /// The last process substitution reaped: (pid, raw status), for `wait`.
    pub procsub_last: Option<(i32, i32)>,
    /// The interactive shell's history (`history`, `!` expansion).
    pub history: crate::history::History,
    /// The line editor's key bindings and variables (`bind`, inputrc).
    pub keymaps: crate::keymap::Keymaps,
    /// Commands read at the prompt so far (`\#` in a prompt).
    pub command_number: usize,
    /// The terminal, once job control has taken it.
    pub jc: Option<crate::job::Terminal>,
    /// The foreground job being started (job control).
    pub group: Option<crate::job::Group>,
    /// `exit` with stopped jobs warned once; a second `exit` leaves.
    pub exit_warned: bool,
    /// A foreground job ran since the last prompt (which then checks the
    /// terminal's modes).
    pub ran_job: bool,
    /// The last compound command failed on its own redirection.
    compound_redirect_failed: bool,
    /// The flow of an expansion that failed in the last redirection (an
    /// arithmetic error, say): a builtin, function or compound command,
    /// whose redirections the shell itself performs, passes it on, so the
    /// rest of the line is abandoned as bash abandons it; an external
    /// command just fails.
    redirect_flow: Option<Flow>,
    /// The `exit` builtin ran, or `exec` failed: the shell leaves with that
    /// status, as bash's `exit_shell` does, not by an error that abandons
    /// the line (see [`Shell::run_subshell`]).
    pub exit_builtin: bool,
}

/// One entry of the call stack.
#[derive(Debug, Clone)]
pub struct Frame {
    /// The function's name, `source`, or `main`.
    pub name: Vec<u8>,
    /// The file its code comes from.
    pub file: Rc<[u8]>,
    /// The line it was called from, in the frame below (0 for `main`).
    pub call_line: u32,
    /// `local -`: the `set` options to restore when the function returns.
    pub saved_opts: Option<Options>,
    /// Its arguments, kept under `shopt -s extdebug` for `BASH_ARGV` and
    /// `BASH_ARGC` (bash keeps them only then).
    pub args: Option<Vec<Vec<u8>>>,
}

/// The bash level rush implements and reports in `BASH_VERSION` and
/// `BASH_VERSINFO`: scripts that need bash check these and refuse to run
/// otherwise. The release field says `rush`, so a script can tell.
pub const BASH_VERSION: &str = "5.2.0(1)-rush";
pub const BASH_VERSINFO: [&str; 6] = ["5", "2", "0", "1", "rush", "x86_64-pc-linux-gnu"];

/// What kind of value a dynamic variable has, and its attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dynamic {
    Plain,
    Integer,
    Readonly,
    ReadonlyInteger,
    Indexed,
    Assoc,
}

/// bash's dynamic variables: computed when read, each with bash's
/// attributes (`declare -p` shows them).
pub const DYNAMIC: &[(&[u8], Dynamic)] = &[
    (b"RANDOM", Dynamic::Integer),
    (b"SRANDOM", Dynamic::Integer),
    (b"SECONDS", Dynamic::Integer),
    (b"BASHPID", Dynamic::Integer),
    (b"HISTCMD", Dynamic::Integer),
    (b"LINENO", Dynamic::Plain),
    (b"BASH_COMMAND", Dynamic::Plain),
    (b"BASH_ARGV0", Dynamic::Plain),
    (b"BASH_SUBSHELL", Dynamic::Plain),
    (b"EPOCHSECONDS", Dynamic::Plain),
    (b"EPOCHREALTIME", Dynamic::Plain),
    (b"HOSTNAME", Dynamic::Plain),
    (b"SHELL", Dynamic::Plain),
    (b"UID", Dynamic::ReadonlyInteger),
    (b"EUID", Dynamic::ReadonlyInteger),
    (b"SHELLOPTS", Dynamic::Readonly),
    (b"BASHOPTS", Dynamic::Readonly),
    (b"GROUPS", Dynamic::Indexed),
    (b"PIPESTATUS", Dynamic::Indexed),
    (b"FUNCNAME", Dynamic::Indexed),
    (b"BASH_SOURCE", Dynamic::Indexed),
    (b"BASH_LINENO", Dynamic::Indexed),
    (b"DIRSTACK", Dynamic::Indexed),
    (b"BASH_ARGV", Dynamic::Indexed),
    (b"BASH_ARGC", Dynamic::Indexed),
    (b"BASH_ALIASES", Dynamic::Assoc),
    (b"BASH_CMDS", Dynamic::Assoc),
];

/// bash's refusal to change an array's kind: `name: cannot convert
/// indexed to associative array` (`to`: the `A` or `a` asked for).
pub fn cannot_convert(to: u8, name: &[u8]) -> String {
    let (from, to) = if to == b'A' {
        ("indexed", "associative")
    } else {
        ("associative", "indexed")
    };
    format!(
        "{}: cannot convert {from} to {to} array",
        String::from_utf8_lossy(name)
    )
}

/// A word written `name[…]`, unquoted: bash's parser marks it an array
/// reference, which `unset` does not expand again.
fn written_as_element(w: &Word) -> bool {
    let (Some(Part::Lit(first)), Some(Part::Lit(last))) = (w.parts.first(), w.parts.last()) else {
        return false;
    };
    let Some(open) = first.iter().position(|&c| c == b'[') else {
        return false;
    };
    crate::parse::is_name(&first[..open]) && last.ends_with(b"]")
}

/// `FUNCNAME` outside any function: declared, with no value (bash shows
/// `declare -a FUNCNAME`).
fn outside_function_funcname(name: &[u8], v: &crate::vars::Var) -> bool {
    name == b"FUNCNAME" && v.value.as_ref().is_some_and(|a| a.keys().is_empty())
}

/// The dynamic variables that bash computes only when they are read:
/// `set`, `declare -p` and the like show the value last read, or none
/// before the first read (an array: empty).
const LISTED_AS_LAST_READ: &[&[u8]] = &[
    b"RANDOM",
    b"SRANDOM",
    b"SECONDS",
    b"LINENO",
    b"BASHPID",
    b"EPOCHSECONDS",
    b"EPOCHREALTIME",
    b"HISTCMD",
    b"BASH_COMMAND",
    b"BASH_SUBSHELL",
    b"BASH_ARGV0",
    b"DIRSTACK",
    b"GROUPS",
    b"BASH_ALIASES",
    b"BASH_CMDS",
];

impl Shell {
    pub fn new(arg0: Vec<u8>) -> Self {
        // What the shell calls itself in messages: its name as invoked.
        let name = String::from_utf8_lossy(&arg0).into_owned();
        let vars = crate::vars::Vars::from_env();
        let pid = std::process::id() as i32;
        let mut sh = Shell {
            vars,
            positional: Vec::new(),
            arg0,
            functions: HashMap::default(),
            aliases: Rc::new(HashMap::default()),
            no_aliases: Rc::new(HashMap::default()),
            opts: Options {
                hashall: true,
                braceexpand: true,
                interactive_comments: true,
                ..Options::default()
            },
            status: 0,
            last_bg: None,
            shell_pid: pid,
            traps: HashMap::default(),
            jobs: Vec::new(),
            loop_depth: 0,
            func_depth: 0,
            line_shift: 0,
            prefix_bound: Vec::new(),
            exec_env: Vec::new(),
            source_depth: 0,
            via_command: false,
            set_changed_args: false,
            fresh_call: false,
            propagate: Vec::new(),
            main_args: None,
            extdebug: false,
            current_simple: None,
            eval_depth: 0,
            bash_command: Vec::new(),
            line: 0,
            name,
            capture: None,
            hash: HashMap::default(),
            hash_seq: 0,
            shopts: BTreeSet::new(),
            perf: Perf::from_env(),
            subshell: false,
            errexit_off: 0,
            cmdsub_status: None,
            tail_ok: false,
            exited: false,
            debug_done: false,
            procsub_fds: Vec::new(),
            procsub_pids: Vec::new(),
            coprocs: Vec::new(),
            procsub_last: None,
            history: crate::history::History::default(),
            keymaps: crate::keymap::Keymaps::default(),
            command_number: 1,
            jc: None,
            group: None,
            exit_warned: false,
            ran_job: false,
            compound_redirect_failed: false,
            redirect_flow: None,
            exit_builtin: false,
            random_state: std::cell::Cell::new((pid as u32 ^ 0x9e37_79b9).max(1)),
            random_last: std::cell::Cell::new(0),
            subshell_level: 0,
            xtrace_level: 0,
            chld_reaped: 0,
            arith_cmd: None,
            arith_name: None,
            arith_flow: None,
            subscript_failed: false,
            discard_text: false,
            literal_args: Vec::new(),
            stdin_redirected: 0,
            disabled_builtins: Default::default(),
            running_traps: Vec::new(),
            getopts_state: (1, 1),
            pipestatus: Vec::new(),
            last_arg: Vec::new(),
            frames: Vec::new(),
            dir_stack: Vec::new(),
            completions: HashMap::default(),
            comp_seq: 0,
            function_files: HashMap::default(),
            traced: Default::default(),
            readonly_functions: Default::default(),
            top_file: Rc::from(&b"environment"[..]),
            started: std::time::Instant::now(),
            last_read: Default::default(),
        };
        sh.init_vars();
        sh
    }

    fn init_vars(&mut self) {
        let _ = self.vars.set(b"IFS", b" \t\n".to_vec());
        // With no PATH in the environment, bash's default search path (not
        // exported).
        if self.vars.get(b"PATH").is_none() {
            let _ = self.vars.set(b"PATH", DEFAULT_PATH.to_vec());
        }
        let _ = self.vars.set(b"PS4", b"+ ".to_vec());
        let _ = self.vars.set(b"OPTIND", b"1".to_vec());
        let _ = self.vars.set(b"OPTERR", b"1".to_vec());
        // TERM when the environment lacks it (bash); SHELL, the user's
        // login shell, is looked up when first read ([`DYNAMIC`]).
        if self.vars.get(b"TERM").is_none() {
            let _ = self.vars.set(b"TERM", b"dumb".to_vec());
        }

        let ppid = nix::unistd::getppid().as_raw();
        let _ = self.vars.set(b"PPID", ppid.to_string().into_bytes());
        // SHELLOPTS and BASHOPTS are computed when read, and read-only.
        // A SHELLOPTS in the environment turns its options on, and stays
        // exported (bash: `export SHELLOPTS; set -x` traces child shells).
        let inherited = self.vars.get(b"SHELLOPTS").map(<[u8]>::to_vec);
        for name in [&b"SHELLOPTS"[..], b"BASHOPTS"] {
            let _ = self.vars.unset(name);
            let _ = self.vars.readonly(name, None);
        }
        if let Some(list) = inherited {
            for o in list.split(|&c| c == b':') {
                crate::builtins::set_option(self, &String::from_utf8_lossy(o), true);
            }
            let _ = self.vars.export(b"SHELLOPTS", None);
        }
        let _ = self.vars.readonly(b"PPID", None);
        self.vars.set_integer(b"PPID");
        self.define_bash_variables();
        if !self.vars.imported_functions.is_empty() {
            self.import_functions();
        }
        // PWD: keep an inherited value if it names the current directory.
        let cwd = std::env::current_dir().ok();
        let keep = match (self.vars.get(b"PWD"), &cwd) {
            (Some(p), Some(c)) => {
                let p = std::path::Path::new(std::ffi::OsStr::from_bytes(p));
                p.is_absolute()
                    && std::fs::metadata(p)
                        .ok()
                        .zip(std::fs::metadata(c).ok())
                        .is_some_and(|(a, b)| {
                            use std::os::unix::fs::MetadataExt;
                            a.dev() == b.dev() && a.ino() == b.ino()
                        })
            }
            _ => false,
        };
        if !keep && let Some(c) = cwd {
            let _ = self
                .vars
                .export(b"PWD", Some(c.as_os_str().as_bytes().to_vec()));
        }
        // OLDPWD: exported, with no value unless the environment's names a
        // directory (bash).
        let old_ok = self
            .vars
            .get(b"OLDPWD")
            .is_some_and(|p| std::path::Path::new(std::ffi::OsStr::from_bytes(p)).is_dir());
        if !old_ok {
            let _ = self.vars.unset(b"OLDPWD");
            let _ = self.vars.export(b"OLDPWD", None);
        }
    }

    /// bash's own variables (its manual's "Shell Variables"), as real
    /// variables with bash's attributes, so that arithmetic, `declare -p`,
    /// `${!prefix@}`, `set` and `unset` see them as bash's do. The
    /// dynamic ones hold no value: they are computed when read
    /// ([`Shell::dynamic_value`]). The environment cannot set any of them
    /// but SHLVL, which counts up from it.
    fn define_bash_variables(&mut self) {
        use crate::vars::Var;
        let arch = std::env::consts::ARCH;
        let plain = |v: String| Var {
            value: Some(Value::Str(v.into_bytes())),
            ..Var::default()
        };
        let array = |items: Vec<Vec<u8>>| Value::Indexed((0..).zip(items).collect());
        self.vars.define(
            b"BASH_VERSINFO",
            Var {
                value: Some(array(
                    BASH_VERSINFO
                        .iter()
                        .map(|s| s.as_bytes().to_vec())
                        .collect(),
                )),
                readonly: true,
                ..Var::default()
            },
        );
        self.vars
            .define(b"BASH_VERSION", plain(BASH_VERSION.into()));
        // These the environment may set (bash sets them only if not).
        for (name, value) in [
            (&b"HOSTTYPE"[..], arch.to_string()),
            (b"MACHTYPE", format!("{arch}-pc-linux-gnu")),
            (b"OSTYPE", "linux-gnu".into()),
            // Readline's word breaks, which completion scripts read (git's).
            (b"COMP_WORDBREAKS", " \t\n\"'@><=;|&(:".into()),
        ] {
            if self.vars.get(name).is_none() {
                self.vars.define(name, plain(value));
            }
        }
        // SHLVL: one more than the environment's (1 when it is not a
        // number), exported.
        let level = self
            .vars
            .get(b"SHLVL")
            .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse::<i64>().ok())
            .map_or(1, |n| if n < 0 { 0 } else { n + 1 });
        self.vars.define(
            b"SHLVL",
            Var {
                value: Some(Value::Str(level.to_string().into_bytes())),
                exported: true,
                ..Var::default()
            },
        );
        for (name, kind) in DYNAMIC {
            // A HOSTNAME or SHELL from the environment stays as it is
            // (bash).
            if matches!(*name, b"HOSTNAME" | b"SHELL") && self.vars.get(name).is_some() {
                continue;
            }
            let value = match kind {
                Dynamic::Indexed => Some(Value::Indexed(Default::default())),
                Dynamic::Assoc => Some(Value::Assoc(Default::default())),
                _ => None,
            };
            self.vars.define(
                name,
                Var {
                    value,
                    integer: matches!(kind, Dynamic::Integer | Dynamic::ReadonlyInteger),
                    readonly: matches!(kind, Dynamic::ReadonlyInteger | Dynamic::Readonly),
                    dynamic: true,
                    ..Var::default()
                },
            );
        }
    }

    /// `$BASH`: the full file name of this shell, from the name it was
    /// started as: as it is when absolute, else found in `PATH` or made
    /// absolute from `PWD` (bash's `get_bash_name`); the running binary
    /// when neither finds it.
    pub fn set_bash_path(&mut self, arg0: &[u8]) {
        let name = arg0.strip_prefix(b"-").unwrap_or(arg0);
        let pwd = self
            .vars
            .get(b"PWD")
            .map(<[u8]>::to_vec)
            .unwrap_or_default();
        let absolute = |rel: &[u8]| {
            let mut p = pwd.clone();
            p.push(b'/');
            p.extend_from_slice(rel.strip_prefix(b"./").unwrap_or(rel));
            p
        };
        let path = if name.starts_with(b"/") {
            Some(name.to_vec())
        } else if name.contains(&b'/') {
            Some(absolute(name))
        } else {
            self.find_command(name).map(|p| {
                let p = p.into_bytes();
                if p.starts_with(b"/") { p } else { absolute(&p) }
            })
        };
        let path = path.or_else(|| {
            std::env::current_exe()
                .ok()
                .map(|p| p.into_os_string().into_encoded_bytes())
        });
        if let Some(p) = path {
            let _ = self.vars.set(b"BASH", p);
        }
    }

    /// Makes the shell restricted (`set -r`, `-r`, `rbash`). PATH, SHELL,
    /// ENV, BASH_ENV and HISTFILE become read-only, at start and by
    /// `set -r` outside `-c` (bash, which does not do it for `set -r`
    /// before the shell is initialized).
    pub fn make_restricted(&mut self, at_start: bool) {
        self.opts.restricted = true;
        if at_start || !self.opts.command_mode {
            for name in [&b"PATH"[..], b"SHELL", b"ENV", b"BASH_ENV", b"HISTFILE"] {
                let _ = self.vars.readonly(name, None);
            }
        }
    }

    /// A shell started restricted (`-r`, `rbash`) takes no functions from
    /// its environment (bash): those imported at start are dropped.
    pub fn drop_imported_functions(&mut self) {
        let imported: Vec<Vec<u8>> = self
            .function_files
            .iter()
            .filter(|(_, f)| &***f == b"environment")
            .map(|(n, _)| n.clone())
            .collect();
        for name in imported {
            self.export_function(&name, false);
            self.functions.remove(&name);
            self.function_files.remove(&name);
        }
    }

    /// In a restricted shell, an error naming what was refused (bash's
    /// `sh_restricted`): `what: restricted`, or `restricted` alone.
    /// Returns whether the shell is restricted.
    pub fn refuse_restricted(&self, what: Option<&[u8]>) -> bool {
        if !self.opts.restricted {
            return false;
        }
        match what {
            Some(w) => self.error(&format!("{}: restricted", String::from_utf8_lossy(w))),
            None => self.error("restricted"),
        }
        true
    }

    /// `export -f name` (`on`) or `export -fn name`: whether there is such
    /// a function. An exported function goes to each child as
    /// `BASH_FUNC_name%%=() { …; }`, which bash and rush import.
    pub fn export_function(&mut self, name: &[u8], on: bool) -> bool {
        let Some(f) = self.functions.get(name) else {
            return false;
        };
        let text = on.then(|| {
            // `name () \n{ …\n}` as `declare -f` prints it, less the name.
            let def = crate::unparse::function(f);
            let body = def.strip_prefix(name).unwrap_or(&def);
            let body = body.trim_ascii();
            let body = body.strip_prefix(b"()").unwrap_or(body).trim_ascii_start();
            [b"() ", body].concat()
        });
        self.vars.export_function(name, text);
        true
    }

    /// Imports the functions the environment exports (`BASH_FUNC_name%%`),
    /// by bash's rules since Shellshock: the value must be one function
    /// definition, of that name, and nothing else; anything else is
    /// reported and ignored, and nothing of it runs.
    fn import_functions(&mut self) {
        for (name, value) in std::mem::take(&mut self.vars.imported_functions) {
            let valid_name = !name.is_empty()
                && !name.contains(&b'/')
                && !name
                    .iter()
                    .any(|c| c.is_ascii_whitespace() || b"|&;<>()$`\\\"'=".contains(c));
            // Not a function's text at all: not bash's, silently left.
            if !valid_name || !value.starts_with(b"() {") {
                continue;
            }
            let text = [name.as_slice(), b" ", &value].concat();
            let def = crate::parse::parse(&text, Rc::new(HashMap::default()))
                .ok()
                .and_then(|list| one_function(list, &name));
            match def {
                Some(f) => {
                    self.function_files
                        .insert(name.clone(), Rc::from(&b"environment"[..]));
                    self.functions.insert(name.clone(), f);
                    self.export_function(&name, true);
                }
                None => {
                    let msg = format!(
                        "{}: error importing function definition for `{}'\n",
                        self.name,
                        String::from_utf8_lossy(&name)
                    );
                    let _ = sys::write_all(2, msg.as_bytes());
                }
            }
        }
    }

    /// Whether `name` is (still) one of the shell's dynamic variables.
    pub fn is_dynamic(&self, name: &[u8]) -> bool {
        self.vars.var(name).is_some_and(|v| v.dynamic)
    }

    /// The value of a dynamic variable as read now: a string, or an array
    /// for the array ones. `None` for any other variable.
    pub fn dynamic_value(&self, name: &[u8]) -> Option<Value> {
        let var = self.vars.var(name)?;
        if !var.dynamic {
            return None;
        }
        let real = self.vars.resolve(name);
        let name = real.as_deref().unwrap_or(name);
        let v = self
            .special_array(name)
            .or_else(|| self.dynamic_scalar(name).map(Value::Str));
        if let Some(v) = &v
            && LISTED_AS_LAST_READ.contains(&name)
        {
            let mut seen = self.last_read.borrow_mut();
            match seen.get_mut(name) {
                Some(old) => old.clone_from(v),
                None => {
                    seen.insert(name.to_vec(), v.clone());
                }
            }
        }
        v
    }

    /// A variable's value as read now: a dynamic variable's computed, any
    /// other's stored.
    pub fn value_of(&self, name: &[u8]) -> Option<std::borrow::Cow<'_, Value>> {
        let var = self.vars.var(name)?;
        if var.dynamic {
            return self.dynamic_value(name).map(std::borrow::Cow::Owned);
        }
        var.value.as_ref().map(std::borrow::Cow::Borrowed)
    }

    /// Every visible variable, sorted by name, the dynamic ones with their
    /// values as read now (`set`, `declare -p`, `${!prefix@}`).
    pub fn visible_vars(&self) -> Vec<(Vec<u8>, crate::vars::Var)> {
        let mut all = self.vars.visible();
        for (k, v) in &mut all {
            if v.dynamic {
                v.value = self.dynamic_value(k);
            }
        }
        all
    }

    /// The visible variable `name` itself (not what a nameref names), a
    /// dynamic one with its value as read now (`declare -p name`).
    pub fn visible_var(&self, name: &[u8]) -> Option<crate::vars::Var> {
        let mut v = self.vars.var_itself(name)?.clone();
        if v.dynamic {
            v.value = self.dynamic_value(name);
            v.declared_only |= outside_function_funcname(name, &v);
        }
        Some(v)
    }

    /// Every visible variable as a listing shows it (`set`, `declare -p`
    /// with no names): the dynamic ones that bash computes only when read
    /// with their last value read ([`LISTED_AS_LAST_READ`]), and
    /// `FUNCNAME` outside a function declared, with no value.
    pub fn listed_vars(&self) -> Vec<(Vec<u8>, crate::vars::Var)> {
        let mut all = self.vars.visible();
        let seen = self.last_read.borrow();
        for (k, v) in &mut all {
            if !v.dynamic {
                continue;
            }
            if LISTED_AS_LAST_READ.contains(&k.as_slice()) {
                v.value = match (seen.get(k.as_slice()), v.value.take()) {
                    (Some(last), _) => Some(last.clone()),
                    (None, Some(Value::Indexed(_))) => Some(Value::Indexed(Default::default())),
                    (None, Some(Value::Assoc(_))) => Some(Value::Assoc(Default::default())),
                    (None, _) => None,
                };
                // bash's SECONDS is an integer only once read.
                if k == b"SECONDS" && v.value.is_none() {
                    v.integer = false;
                }
                continue;
            }
            v.value = self.dynamic_value(k);
            v.declared_only |= outside_function_funcname(k, v);
        }
        all
    }

    /// What an assignment to a dynamic variable does besides storing:
    /// `RANDOM=n` seeds the generator, `SECONDS=n` counts from n.
    /// HOSTNAME and SHELL are computed when read only until something is
    /// done to them: then they are plain variables with that value (bash
    /// sets them at start-up, which costs a password-file lookup here).
    pub fn materialize(&mut self, name: &[u8]) {
        if matches!(name, b"HOSTNAME" | b"SHELL") && self.is_dynamic(name) {
            let v = self.dynamic_scalar(name);
            self.vars.set_dynamic(name, false);
            if let Some(v) = v {
                let _ = self.vars.set(name, v);
            }
        }
    }

    pub fn assigned_dynamic(&mut self, name: &[u8], value: &[u8]) {
        if matches!(name, b"HOSTNAME" | b"SHELL") {
            self.materialize(name);
            return;
        }
        // Assigning POSIXLY_CORRECT, even empty, is `set -o posix` (bash).
        if name == b"POSIXLY_CORRECT" {
            self.opts.posix = true;
            return;
        }
        // Assigning IGNOREEOF, any value, turns ignoreeof on (bash).
        if name == b"IGNOREEOF" {
            self.opts.ignoreeof = true;
            return;
        }
        // Assigning GLOBIGNORE patterns turns dotglob on (bash).
        if name == b"GLOBIGNORE" {
            if !value.is_empty() {
                crate::builtins::set_shopt(self, "dotglob", true);
            }
            return;
        }
        // Every assignment passes here: the names come first, the lookup
        // only for them.
        if !matches!(name, b"RANDOM" | b"SECONDS" | b"BASH_ARGV0") || !self.is_dynamic(name) {
            return;
        }
        if name == b"BASH_ARGV0" {
            self.arg0 = value.to_vec();
            return;
        }
        let n = std::str::from_utf8(value)
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok())
            .unwrap_or(0);
        match name {
            b"RANDOM" => {
                self.random_state.set(n as u32);
                self.random_last.set(0);
            }
            b"SECONDS" => {
                let now = std::time::Instant::now();
                self.started = u64::try_from(n)
                    .ok()
                    .and_then(|s| now.checked_sub(std::time::Duration::from_secs(s)))
                    .unwrap_or(now);
            }
            _ => {}
        }
    }

    /// The next `RANDOM`: bash's own generator (Park and Miller's minimal
    /// standard, its two halves folded, never the same value twice in a
    /// row), so that `RANDOM=seed` gives bash's sequence.
    pub fn random(&self) -> u32 {
        fn next(last: u32) -> u32 {
            let last = if last == 0 { 123_459_876 } else { last as i64 };
            let (h, l) = (last / 127_773, last % 127_773);
            let mut t = 16_807 * l - 2_836 * h;
            if t < 0 {
                t += 0x7fff_ffff;
            }
            t as u32
        }
        loop {
            let seed = next(self.random_state.get());
            self.random_state.set(seed);
            let v = ((seed >> 16) ^ (seed & 0xffff)) & 32767;
            if v != self.random_last.get() {
                self.random_last.set(v);
                return v;
            }
        }
    }

    // ---- messages ------------------------------------------------------

    /// Reports an error as bash does: an interactive shell names itself;
    /// otherwise the message names the file being run (the innermost
    /// function's or sourced file's, the script's) or else `$0` (the NAME
    /// after `-c CMD`, or the shell as invoked), and the line.
    pub fn error(&self, msg: &str) {
        let text = if self.opts.interactive {
            format!("{}: {msg}\n", self.name)
        } else {
            let who = String::from_utf8_lossy(self.script_name());
            format!("{who}: line {}: {msg}\n", self.line)
        };
        let _ = sys::write_all(2, text.as_bytes());
    }

    /// A builtin's usage line, as bash writes it: bare, with no name or
    /// line before it.
    pub fn usage(&self, text: &str) {
        let _ = sys::write_all(2, format!("{text}\n").as_bytes());
    }

    /// Reports an error that ends a non-interactive shell: returns the flow
    /// that does so.
    /// An expansion error that ends a non-interactive shell (`set -u`,
    /// `${x?}`): status 1, but 127 at the top of `-c` (bash's FORCE_EOF
    /// there).
    pub fn fatal(&mut self, msg: &str) -> Flow {
        self.error(msg);
        if self.opts.interactive && !self.subshell {
            Flow::Abort(1)
        } else if self.opts.command_mode && !self.subshell {
            Flow::Exit(127)
        } else {
            Flow::Exit(1)
        }
    }

    /// Reports an error that abandons the rest of the line (a failed
    /// assignment, `failglob`): the script goes on at the next line with
    /// `status`, as in bash; with `set -e` or in POSIX mode the shell
    /// leaves.
    pub fn abandon(&mut self, msg: &str, status: i32) -> Flow {
        self.error(msg);
        if (self.opts.posix || self.opts.errexit) && !self.opts.interactive {
            Flow::Exit(status)
        } else {
            Flow::Abort(status)
        }
    }

    /// An expansion error (a bad substitution, an arithmetic error, a
    /// read-only variable): [`Shell::abandon`] with status 1, except that
    /// in POSIX mode at the top of `-c` the shell leaves with 127 (bash's
    /// FORCE_EOF there).
    pub fn expansion_error(&mut self, msg: &str) -> Flow {
        if self.opts.posix && self.opts.command_mode && !self.subshell && !self.opts.interactive {
            self.error(msg);
            return Flow::Exit(127);
        }
        self.abandon(msg, 1)
    }

    /// Standard output of builtins: the capture buffer, or fd 1.
    pub fn out(&mut self, bytes: &[u8]) -> io::Result<()> {
        match &mut self.capture {
            Some(buf) => {
                buf.extend_from_slice(bytes);
                Ok(())
            }
            None => sys::write_all(1, bytes),
        }
    }

    pub fn err_out(&self, bytes: &[u8]) {
        let _ = sys::write_all(2, bytes);
    }

    /// Writes `set -x` output: to the descriptor in `BASH_XTRACEFD` if it
    /// holds one, else to standard error (bash).
    pub fn trace_out(&self, bytes: &[u8]) {
        let fd = self
            .vars
            .get(b"BASH_XTRACEFD")
            .and_then(|v| std::str::from_utf8(v).ok()?.parse::<i32>().ok())
            .filter(|&fd| fd >= 0)
            .unwrap_or(2);
        let _ = sys::write_all(fd, bytes);
    }

    // ---- the top level -------------------------------------------------

    /// The aliases the parser expands: none unless `shopt -s
    /// expand_aliases` (on in interactive shells) or POSIX mode, as in
    /// bash, where a script's aliases are only text until it asks.
    pub fn parser_aliases(&self) -> Aliases {
        if self.opts.posix || crate::builtins::shopt_on(self, "expand_aliases") {
            self.aliases.clone()
        } else {
            self.no_aliases.clone()
        }
    }

    /// Gives `parser` the aliases defined or enabled since its last command.
    fn update_aliases(&self, parser: &mut Parser<'_>) {
        // The usual case, no aliases at all, without looking at shopt.
        if self.aliases.is_empty() && parser.aliases_ref().is_empty() {
            return;
        }
        let want = self.parser_aliases();
        if !Rc::ptr_eq(&want, parser.aliases_ref()) {
            parser.set_aliases(want);
        }
    }

    /// Reads and runs commands from `src` one at a time until the end, an
    /// `exit`, or a fatal error. Returns the status to exit with.
    pub fn run_source(&mut self, first: &[u8], src: &mut dyn Source, tail_exec: bool) -> i32 {
        let mut parser = Parser::new(first, src, self.parser_aliases());
        loop {
            self.update_aliases(&mut parser);
            parser.set_posix(self.opts.posix);
            // A script's history (`set -o history`): `!` expansion of the
            // line about to be read (`set -H`), and the lines recorded.
            let script_history = self.opts.history && !self.opts.interactive;
            if script_history && self.opts.histexpand && !self.script_history_expand(&mut parser) {
                continue;
            }
            let mut before = parser.position();
            let before_line = parser.line();
            let t0 = self.perf.as_ref().map(|_| std::time::Instant::now());
            let mut cmd = parser.next_command();
            // The later lines of a multi-line command are `!`-expanded too
            // (bash expands each line as it reads it): when one changes,
            // the command is read again.
            if script_history
                && self.opts.histexpand
                && matches!(cmd, Ok(Some(_)))
                && self.expand_later_lines(&mut parser, before.0)
            {
                parser.rewind(before.0, before_line);
                before.1 = parser.position().1;
                cmd = parser.next_command();
            }
            if let (Some(p), Some(t0)) = (self.perf.as_mut(), t0) {
                p.record(crate::perf::Phase::Parse, t0.elapsed());
            }
            if parser.has_warnings() {
                let warnings = parser.take_warnings();
                self.parse_warnings(warnings);
            }
            match cmd {
                Ok(None) => return self.status,
                Ok(Some(list)) => {
                    // `set -o history` in a script: each command line
                    // read is recorded, as bash does (the interactive
                    // shell records what was typed itself).
                    if script_history {
                        let after = parser.position();
                        if after.1 == before.1 {
                            let text = parser.text(before.0, after.0).to_vec();
                            self.record_history_lines(&text);
                        } else {
                            // An alias changed the text: the command as
                            // rush prints it.
                            self.record_history(&list);
                        }
                    }
                    if self.opts.noexec {
                        continue;
                    }
                    // In -c mode, a last command that is external may replace
                    // the shell.
                    self.tail_ok = tail_exec && parser.at_end() && self.traps.is_empty();
                    self.discard_text = false;
                    let r = self.run_list(&list);
                    self.tail_ok = false;
                    match r {
                        Ok(s) => self.status = s,
                        Err(Flow::Exit(s)) => {
                            self.status = s;
                            return s;
                        }
                        Err(Flow::Return(s)) => {
                            // `return` at the top level of a script.
                            self.status = s;
                            if self.source_depth > 0 {
                                return s;
                            }
                            return s;
                        }
                        Err(Flow::Interrupt) => {
                            self.status = 130;
                            return 130;
                        }
                        Err(Flow::Abort(s)) => {
                            self.status = s;
                            if std::mem::take(&mut self.discard_text)
                                && self.opts.command_mode
                                && !self.opts.interactive
                            {
                                return s;
                            }
                            if !self.opts.interactive {
                                parser.resume_lines_at(self.line);
                            }
                        }
                        Err(Flow::Break(_) | Flow::Continue(_)) => {}
                    }
                }
                Err(e) if e.discard_line && (self.opts.interactive || !self.opts.posix) => {
                    self.syntax_error(&e);
                    self.status = 1;
                    parser.discard_line();
                }
                Err(e) => {
                    self.syntax_error(&e);
                    self.status = if e.discard_line {
                        1
                    } else if e.in_comsub && self.opts.command_mode && !self.opts.interactive {
                        // bash reads `-c` text as it reads eval's.
                        127
                    } else {
                        2
                    };
                    return self.status;
                }
            }
        }
    }

    /// Reports a syntax error as bash does: where the text came from (a
    /// file's name or the shell's, `-c` or `eval` before the line), then
    /// the line with the unexpected token.
    /// The name errors start with outside an interactive shell: the file
    /// being run (the innermost function's or sourced file's, the
    /// script's), or else `$0`.
    pub fn script_name(&self) -> &[u8] {
        match self.frames.last() {
            Some(f) => &f.file,
            None => &self.arg0,
        }
    }

    /// Prints the parser's warnings (`here-document … delimited by
    /// end-of-file`) as bash does, each with its line.
    pub fn parse_warnings(&mut self, warnings: Vec<(u32, String)>) {
        for (line, msg) in warnings {
            let text = if self.opts.interactive {
                format!("{}: {msg}\n", self.name)
            } else {
                format!(
                    "{}: line {line}: {msg}\n",
                    String::from_utf8_lossy(self.script_name())
                )
            };
            self.err_out(text.as_bytes());
        }
    }

    pub fn syntax_error(&mut self, e: &ParseError) {
        self.line = e.line;
        // What the parser refuses that is not a syntax error (`for
        // bad-name`) is reported as any other error (bash).
        if !e.message.starts_with("syntax error") && !e.message.starts_with("unexpected EOF") {
            self.error(&e.message);
            return;
        }
        let who = String::from_utf8_lossy(self.script_name()).into_owned();
        let prefix = if self.opts.interactive {
            format!("{}: ", self.name)
        } else {
            let within = if self.eval_depth > 0 {
                "eval: "
            } else if self.opts.command_mode && self.source_depth == 0 {
                "-c: "
            } else {
                ""
            };
            format!("{who}: {within}line {}: ", e.line)
        };
        // A message of two lines (`for ((…))`) has the prefix on each.
        let mut text = Vec::new();
        for m in e.message.split('\n') {
            text.extend_from_slice(format!("{prefix}{m}\n").as_bytes());
        }
        if let Some(line) = &e.offending {
            text.extend_from_slice(prefix.as_bytes());
            text.push(b'`');
            text.extend_from_slice(line);
            text.extend_from_slice(b"'\n");
        }
        let _ = sys::write_all(2, &text);
    }

    /// Runs the EXIT trap (once) and returns the status to exit with.
    pub fn finish(&mut self, status: i32) -> i32 {
        if self.exited {
            return status;
        }
        self.exited = true;
        if let Some(action) = self.traps.get(&0).cloned() {
            self.status = status;
            let saved = self.status;
            self.running_traps.push(0);
            let r = self.eval_text(&action);
            self.running_traps.pop();
            if let Err(Flow::Exit(s)) = r {
                return s;
            }
            return saved;
        }
        status
    }

    /// Adds a command line read from a script to the history (`set -o
    /// history`), as the shell prints it.
    fn record_history(&mut self, list: &List) {
        let mut line = Vec::new();
        for (i, item) in list.items.iter().enumerate() {
            if i > 0 {
                line.extend_from_slice(b"; ");
            }
            line.extend(crate::unparse::and_or(&item.and_or));
            if item.background {
                line.extend_from_slice(b" &");
            }
        }
        self.add_history_entry(&line);
    }

    /// Records the lines a script's command was read from, as bash does
    /// with `cmdhist`: a comment line before the command is an entry of
    /// its own; the command's lines are one entry, each joined to the one
    /// before with `; `, or a space after a line that ends where no `;`
    /// may follow (`do`, `then`, `{`, `|`, …), or a newline inside a
    /// here-document.
    fn record_history_lines(&mut self, text: &[u8]) {
        let mut entry: Vec<u8> = Vec::new();
        let heredoc = text.windows(2).any(|w| w == b"<<");
        for line in text.split(|&c| c == b'\n') {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            if entry.is_empty() {
                if line.trim_ascii_start().starts_with(b"#") {
                    self.add_history_entry(line);
                    continue;
                }
                entry.extend_from_slice(line);
                continue;
            }
            let prev = entry.trim_ascii_end();
            let last_word = prev
                .rsplit(|c| c.is_ascii_whitespace())
                .next()
                .unwrap_or_default();
            let sep: &[u8] = if heredoc {
                b"\n"
            } else if prev.ends_with(b";")
                || prev.ends_with(b"&")
                || prev.ends_with(b"|")
                || prev.ends_with(b"(")
                || matches!(
                    last_word,
                    b"do" | b"then" | b"else" | b"elif" | b"{" | b"in" | b"case" | b"!"
                )
            {
                b" "
            } else {
                b"; "
            };
            entry.extend_from_slice(sep);
            entry.extend_from_slice(line);
        }
        if !entry.is_empty() {
            // A here-document's last line keeps its newline (bash).
            if heredoc {
                entry.push(b'\n');
            }
            self.add_history_entry(&entry);
        }
    }

    fn add_history_entry(&mut self, line: &[u8]) {
        let (size, _, control) = crate::builtins::history::settings(self);
        self.history.line_entry =
            !crate::builtins::history::ignored(self, line) && self.history.add(line, control, size);
    }

    /// `!` expansion of a script's next lines (`set -o history` and `set
    /// -H`), as bash does as it reads each: blank and comment lines up to
    /// and including the next command's first line. An expanded line is
    /// printed to standard error and replaces the line; one that fails,
    /// or asks only to be printed (`:p`), is reported and dropped, and
    /// `false` is returned.
    fn script_history_expand(&mut self, parser: &mut Parser<'_>) -> bool {
        let mut at = parser.position().0;
        while let Some((start, end)) = parser.line_at(at) {
            let line = parser.text(start, end).to_vec();
            let content = line.trim_ascii_start();
            let last = !(content.is_empty() || content.starts_with(b"#"));
            if line.contains(&b'!') || line.starts_with(b"^") {
                match crate::history::expand_line(&self.history, &line) {
                    Ok((Some(expanded), print_only)) => {
                        self.err_out(&[&expanded[..], b"\n"].concat());
                        if print_only {
                            self.add_history_entry(&expanded);
                            parser.replace_text(start, end, b"");
                            return false;
                        }
                        parser.replace_text(start, end, &expanded);
                    }
                    Ok((None, _)) => {}
                    Err(msg) => {
                        self.error(&msg);
                        parser.replace_text(start, end, b"");
                        self.status = 1;
                        return false;
                    }
                }
            }
            if last {
                break;
            }
            let Some((_, end)) = parser.line_at(start) else {
                break;
            };
            at = end + 1;
        }
        true
    }

    /// `!` expansion of the lines after the first of the command just
    /// read from `start` (see [`Shell::script_history_expand`]); whether
    /// any changed. A failed one is reported and left as it was.
    fn expand_later_lines(&mut self, parser: &mut Parser<'_>, start: usize) -> bool {
        let end = parser.position().0;
        let text = parser.text(start, end).to_vec();
        // A here-document's body is not expanded (bash): a command with
        // one is left as it was.
        let heredoc = (0..text.len().saturating_sub(2)).any(|i| {
            text[i..].starts_with(b"<<") && text[i + 2] != b'<' && (i == 0 || text[i - 1] != b'<')
        });
        if heredoc {
            return false;
        }
        // From the line after the command's first line.
        let mut at = start;
        let mut seen_command = false;
        let mut changed = false;
        let mut edits: Vec<(usize, usize, Vec<u8>)> = Vec::new();
        for line in text.split(|&c| c == b'\n') {
            let line_start = at;
            at += line.len() + 1;
            let content = line.trim_ascii_start();
            if !seen_command {
                seen_command = !(content.is_empty() || content.starts_with(b"#"));
                continue;
            }
            if !line.contains(&b'!') && !line.starts_with(b"^") {
                continue;
            }
            match crate::history::expand(&self.history, line) {
                Ok(Some(expanded)) => {
                    self.err_out(&[&expanded[..], b"\n"].concat());
                    edits.push((line_start, line_start + line.len(), expanded));
                    changed = true;
                }
                Ok(None) => {}
                Err(msg) => self.error(&msg),
            }
        }
        // From the end, so that earlier positions hold.
        for (a, b, new) in edits.into_iter().rev() {
            parser.replace_text(a, b, &new);
        }
        changed
    }

    /// Parses and runs `text` (eval, traps, source'd files), command by
    /// command.
    pub fn eval_text(&mut self, text: &[u8]) -> Exec {
        let mut src = crate::parse::Text;
        let mut parser =
            Parser::new(text, &mut src, self.parser_aliases()).with_line(self.line.max(1));
        self.xtrace_level += 1;
        let r = self.eval_parsed(text, &mut parser);
        self.xtrace_level -= 1;
        r
    }

    fn eval_parsed(&mut self, text: &[u8], parser: &mut Parser<'_>) -> Exec {
        let mut status = 0;
        loop {
            self.update_aliases(parser);
            parser.set_posix(self.opts.posix);
            let cmd = parser.next_command();
            if parser.has_warnings() {
                let warnings = parser.take_warnings();
                self.parse_warnings(warnings);
            }
            match cmd {
                Ok(None) => return Ok(status),
                Ok(Some(list)) => {
                    if self.opts.noexec {
                        continue;
                    }
                    status = match self.run_list(&list) {
                        // An expansion error abandons the command; the
                        // text goes on with the next one (bash's DISCARD
                        // in eval, source and traps), unless it threw
                        // away all text ([`Shell::discard_text`]).
                        Err(Flow::Abort(s)) if !self.discard_text => s,
                        r => r?,
                    };
                    self.status = status;
                }
                Err(e) if e.discard_line && !self.opts.posix => {
                    self.syntax_error(&e);
                    status = 1;
                    self.status = status;
                    parser.discard_line();
                }
                Err(mut e) => {
                    // bash reads a string with a newline at its end: an
                    // error at the end is on the line after.
                    if e.at_eof && e.message.starts_with("syntax error") {
                        e.line += eof_lines(text);
                    }
                    // In eval, source and traps a syntax error is the
                    // command's failure (status 2), not the shell's end;
                    // but one inside `$(…)` ends a shell that is not
                    // interactive, as a fatal expansion error does.
                    self.syntax_error(&e);
                    if e.in_comsub && !self.opts.interactive {
                        return Err(if self.opts.command_mode && !self.subshell {
                            Flow::Exit(127)
                        } else {
                            Flow::Exit(1)
                        });
                    }
                    return Ok(2);
                }
            }
        }
    }

    /// Runs trap actions for signals that arrived.
    #[inline]
    pub fn run_traps(&mut self) -> Result<(), Flow> {
        // The usual case, no signal caught, without a call.
        if !sys::trap_pending() {
            return Ok(());
        }
        self.run_pending_traps()
    }

    fn run_pending_traps(&mut self) -> Result<(), Flow> {
        if self.running_traps.iter().any(|&t| t > 0) {
            return Ok(());
        }
        let mut interrupted = false;
        for sig in sys::take_pending() {
            if let Some(action) = self.traps.get(&sig).cloned() {
                // SIGCHLD's action runs once for each child that ended,
                // however many signals the kernel merged (bash).
                let times = if sig == libc::SIGCHLD {
                    self.reap_jobs();
                    std::mem::take(&mut self.chld_reaped).max(1)
                } else {
                    1
                };
                for _ in 0..times {
                    // A signal's action counts its own lines (bash).
                    let line = std::mem::replace(&mut self.line, 1);
                    let r = self.run_trap_action(sig, &action);
                    self.line = line;
                    r?;
                }
            } else if sig == libc::SIGINT && self.opts.interactive && !self.subshell {
                interrupted = true;
            } else if sig == libc::SIGHUP && self.opts.interactive && !self.subshell {
                // The terminal hung up: the jobs get SIGHUP too, and the
                // shell leaves (bash).
                self.hang_up_jobs();
                return Err(Flow::Exit(128 + libc::SIGHUP));
            }
        }
        if interrupted {
            return Err(Flow::Interrupt);
        }
        Ok(())
    }

    // ---- lists ---------------------------------------------------------

    pub fn run_list(&mut self, list: &List) -> Exec {
        let mut status = self.status;
        let n = list.items.len();
        let tail = self.tail_ok;
        for (i, item) in list.items.iter().enumerate() {
            self.tail_ok = tail && i + 1 == n && !item.background;
            if item.background {
                status = self.run_background(&item.and_or)?;
            } else {
                status = self.run_and_or(&item.and_or)?;
            }
            self.status = status;
            self.run_traps()?;
        }
        Ok(status)
    }

    fn run_and_or(&mut self, ao: &AndOr) -> Exec {
        let tail = self.tail_ok;
        let has_rest = !ao.rest.is_empty();
        if has_rest {
            self.errexit_off += 1;
        }
        self.tail_ok = tail && !has_rest;
        self.compound_redirect_failed = false;
        let first = self.run_pipeline(&ao.first);
        if has_rest {
            self.errexit_off -= 1;
        }
        let mut status = first?;
        self.status = status;
        let mut last_ran_bang = ao.first.bang;
        let mut last_ran_final = !has_rest;
        let mut last_ran = &ao.first;
        for (i, (conn, p)) in ao.rest.iter().enumerate() {
            let is_last = i + 1 == ao.rest.len();
            let run = match conn {
                Connector::And => status == 0,
                Connector::Or => status != 0,
            };
            if !run {
                last_ran_final = false;
                continue;
            }
            if !is_last {
                self.errexit_off += 1;
            }
            self.tail_ok = tail && is_last;
            self.compound_redirect_failed = false;
            let r = self.run_pipeline(p);
            if !is_last {
                self.errexit_off -= 1;
            }
            status = r?;
            self.status = status;
            last_ran_bang = p.bang;
            last_ran_final = is_last;
            last_ran = p;
        }
        self.tail_ok = false;
        // A compound command the shell runs itself fails because a command
        // in it failed, which the ERR trap and `set -e` already saw (or
        // were off for): not again (bash). Its own failed redirection
        // counts.
        if status != 0
            && last_ran_final
            && !last_ran_bang
            && (self.compound_redirect_failed || !runs_in_shell(last_ran))
        {
            self.check_errexit(status)?;
        }
        Ok(status)
    }

    /// `set -e`: a failed command outside a condition ends the shell.
    pub fn check_errexit(&mut self, status: i32) -> Result<(), Flow> {
        if self.errexit_off > 0 || status == 0 {
            return Ok(());
        }
        // bash's ERR trap runs where errexit would act.
        if !self.running_traps.contains(&sys::ERR_TRAP)
            && let Some(action) = self.traps.get(&sys::ERR_TRAP).cloned()
            && !action.is_empty()
        {
            self.status = status;
            self.run_trap_action(sys::ERR_TRAP, &action)?;
        }
        if self.opts.errexit {
            return Err(Flow::Exit(status));
        }
        Ok(())
    }

    fn run_background(&mut self, ao: &AndOr) -> Exec {
        // Under job control, a background job is a process group of its
        // own, without the terminal.
        let group = self
            .job_control()
            .then_some(sys::Pgrp { pgid: 0, tty: None });
        match sys::fork() {
            Ok(sys::Forked::Child) => {
                if let Some(g) = group {
                    g.join_from_child();
                }
                self.become_subshell();
                // Without job control, a background command ignores SIGINT
                // and SIGQUIT, and reads /dev/null unless a command around
                // it redirected standard input.
                if !self.opts.monitor {
                    let _ = sys::set_disposition(libc::SIGINT, sys::Disposition::Ignore);
                    let _ = sys::set_disposition(libc::SIGQUIT, sys::Disposition::Ignore);
                    if self.stdin_redirected == 0
                        && let Ok(null) = std::fs::File::open("/dev/null")
                    {
                        let _ = sys::dup2(null.as_raw_fd(), 0);
                    }
                }
                // The child ends after this command: it may exec it.
                self.tail_ok = true;
                // An async simple command's failure is the job's status,
                // not an error in the child: no ERR trap, no errexit
                // (bash). Inside a group they still apply.
                if ao.rest.is_empty()
                    && matches!(ao.first.commands.as_slice(), [Command::Simple(_)])
                {
                    self.errexit_off += 1;
                }
                let r = self.run_and_or(ao);
                self.exit_subshell(r)
            }
            Ok(sys::Forked::Parent(pid)) => {
                if let Some(g) = group {
                    g.join_from_parent(pid);
                }
                let text = String::from_utf8_lossy(&crate::unparse::and_or(ao)).into_owned();
                self.add_background_job(pid, text);
                self.set_pipestatus(&[0]);
                Ok(0)
            }
            Err(e) => {
                self.error(&format!("fork: {e}"));
                Ok(1)
            }
        }
    }

    /// State changes on entering a forked subshell.
    pub fn become_subshell(&mut self) {
        self.subshell = true;
        self.subshell_level += 1;
        // A subshell's RANDOM goes its own way (bash reseeds it).
        self.random_state
            .set(std::process::id() ^ self.random_state.get().rotate_left(7));
        self.tail_ok = false;
        // The parent's jobs stay listed (`jobs | wc -l`), though this
        // process cannot wait for them.
        // Traps are reset in a subshell, except ignored signals, and ERR
        // with `set -E`, DEBUG and RETURN with `set -T`.
        let traps = std::mem::take(&mut self.traps);
        for (sig, action) in traps {
            let inherited = match sig {
                sys::ERR_TRAP => self.opts.errtrace,
                sys::DEBUG_TRAP | sys::RETURN_TRAP => self.functrace(),
                _ => false,
            };
            if action.is_empty() || inherited {
                self.traps.insert(sig, action);
            } else if sig != 0 {
                sys::to_default(sig);
            }
        }
        // An interactive shell's own handling of SIGINT and SIGHUP, and the
        // signals it ignores for itself, are not the child's: a Ctrl-C that
        // comes before the child execs must end it, as it would the
        // program.
        if self.opts.interactive {
            for sig in [libc::SIGINT, libc::SIGHUP] {
                if !self.traps.contains_key(&sig) {
                    sys::uncatch(sig);
                }
            }
        }
        sys::restore_shell_signals();
        self.exited = false;
    }

    /// Ends a forked subshell with the result of what it ran.
    pub fn exit_subshell(&mut self, r: Exec) -> ! {
        let status = match r {
            Ok(s) => s,
            Err(Flow::Exit(s)) | Err(Flow::Return(s)) => s,
            Err(Flow::Interrupt) => 130,
            Err(Flow::Abort(s)) => s,
            Err(Flow::Break(_) | Flow::Continue(_)) => self.status,
        };
        let status = self.finish(status);
        if let Some(p) = self.perf.as_mut() {
            p.report();
        }
        sys::exit_now(status)
    }

    // ---- pipelines -----------------------------------------------------

    fn run_pipeline(&mut self, p: &Pipeline) -> Exec {
        let start = p.timed.then(|| (std::time::Instant::now(), cpu_times()));
        if p.timed {
            // The shell must outlive the command to report its time.
            self.tail_ok = false;
        }
        if p.bang {
            self.errexit_off += 1;
        }
        let job = self.begin_job();
        let r = if p.commands.len() == 1 {
            if p.bang {
                self.tail_ok = false;
            }
            let r = self.run_command(&p.commands[0]);
            // A compound command's own status does not go into
            // PIPESTATUS, only that of the commands it ran (bash: a
            // `case` that matched nothing leaves it as it was).
            if let Ok(s) = r
                && !runs_in_shell(p)
            {
                self.set_pipestatus(&[s]);
            }
            r
        } else {
            self.tail_ok = false;
            self.run_multi(p)
        };
        if let Some(outer) = job {
            self.end_job(outer, &|| crate::unparse::pipeline(p));
        }
        if p.bang {
            self.errexit_off -= 1;
        }
        let mut status = r?;
        if p.bang {
            status = i32::from(status == 0);
        }
        if let Some((t, before)) = start {
            let real = t.elapsed().as_micros() as u64;
            let after = cpu_times();
            let micros = |s: f64| (s.max(0.0) * 1e6).round() as u64;
            let (user, sys) = (micros(after.0 - before.0), micros(after.1 - before.1));
            // TIMEFORMAT, as bash reads it: unset, the default; empty, no
            // report at all.
            let fmt = match self.vars.get(b"TIMEFORMAT") {
                _ if p.posix_time => POSIX_TIMEFORMAT.to_vec(),
                Some(f) => f.to_vec(),
                None => DEFAULT_TIMEFORMAT.to_vec(),
            };
            if !fmt.is_empty() {
                match time_report(&fmt, real, user, sys) {
                    Ok(mut out) => {
                        out.push(b'\n');
                        self.err_out(&out);
                    }
                    Err(c) => self.error(&format!(
                        "TIMEFORMAT: `{}': invalid format character",
                        char::from(c)
                    )),
                }
            }
        }
        Ok(status)
    }

    /// `select var in items`: the menu (on stderr), PS3, a line read as
    /// `read` reads it into REPLY; `var` gets the item its number names
    /// (empty if none), then the body runs. An empty line shows the menu
    /// again. It ends at `break`, or at the end of input (status 1).
    fn run_select(&mut self, var: &[u8], items: &[Vec<u8>], body: &List) -> Exec {
        // Nothing to choose from: bash does nothing, successfully.
        if items.is_empty() {
            return Ok(0);
        }
        let columns = self
            .vars
            .get(b"COLUMNS")
            .and_then(|c| std::str::from_utf8(c).ok()?.trim().parse().ok())
            .filter(|&c: &usize| c > 0)
            .unwrap_or(80);
        let mut status = 0;
        let mut menu = true;
        self.loop_depth += 1;
        let r = (|| {
            loop {
                if menu {
                    self.err_out(&select_menu(items, columns));
                    menu = false;
                }
                let ps3 = self.vars.get(b"PS3").unwrap_or(b"#? ").to_vec();
                self.err_out(&ps3);
                if crate::read::read(self, &[b"read".to_vec()])? != 0 {
                    let _ = self.out(b"\n");
                    return Ok(1);
                }
                let reply = self.vars.get(b"REPLY").unwrap_or_default().to_vec();
                if reply.is_empty() {
                    menu = true;
                    continue;
                }
                let chosen = std::str::from_utf8(&reply)
                    .ok()
                    .and_then(|r| r.trim().parse::<usize>().ok())
                    .and_then(|n| n.checked_sub(1))
                    .and_then(|i| items.get(i))
                    .cloned()
                    .unwrap_or_default();
                if let Err(e) = self.vars.set(var, chosen) {
                    self.error(&e.to_string());
                    return Ok(1);
                }
                match step(self.run_list(body)) {
                    Step::Done(s) => status = s,
                    Step::Break => return Ok(status),
                    Step::Continue => status = 0,
                    Step::Leave(f) => return Err(f),
                }
            }
        })();
        self.loop_depth -= 1;
        r
    }

    fn run_multi(&mut self, p: &Pipeline) -> Exec {
        let n = p.commands.len();
        let mut pids = Vec::with_capacity(n);
        let mut prev_read: Option<OwnedFd> = None;
        // `shopt -s lastpipe`: the last command runs in this shell.
        let lastpipe = !self.opts.monitor && crate::builtins::shopt_on(self, "lastpipe");
        let mut last_status = None;
        for (i, cmd) in p.commands.iter().enumerate() {
            let last = i + 1 == n;
            if last && lastpipe {
                let saved = sys::save_fd(0).ok().flatten();
                if let Some(r) = prev_read.take() {
                    let _ = sys::dup2(r.as_raw_fd(), 0);
                }
                let r = self.run_command(cmd);
                match saved {
                    Some(c) => {
                        let _ = sys::dup2(c, 0);
                        sys::close(c);
                    }
                    None => sys::close(0),
                }
                match r {
                    Ok(s) => last_status = Some(s),
                    Err(f) => {
                        // Reap the others before leaving.
                        for pid in pids {
                            let _ = sys::wait_pid(pid, false);
                        }
                        return Err(f);
                    }
                }
                break;
            }
            let (next_read, write) = if last {
                (None, None)
            } else {
                match sys::pipe() {
                    Ok((r, w)) => (Some(r), Some(w)),
                    Err(e) => {
                        self.error(&format!("pipe: {e}"));
                        return Ok(1);
                    }
                }
            };
            // bash runs the DEBUG trap for each element before it forks;
            // the child does not run it again for the same command.
            if let Command::Simple(s) = cmd {
                self.at_line(s.line);
                self.run_debug_trap(|| crate::unparse::simple(s))?;
            }
            let group = self.job_pgrp();
            match sys::fork() {
                Ok(sys::Forked::Child) => {
                    if let Some(g) = group {
                        g.join_from_child();
                    }
                    self.become_subshell();
                    // bash counts no BASH_SUBSHELL level for an element of
                    // a pipeline.
                    self.subshell_level -= 1;
                    self.debug_done = matches!(cmd, Command::Simple(_));
                    if let Some(r) = &prev_read {
                        let _ = sys::dup2(r.as_raw_fd(), 0);
                    }
                    if let Some(w) = &write {
                        let _ = sys::dup2(w.as_raw_fd(), 1);
                        if p.stderr_too.get(i).copied().unwrap_or(false) {
                            let _ = sys::dup2(w.as_raw_fd(), 2);
                        }
                    }
                    drop(prev_read);
                    drop(write);
                    drop(next_read);
                    // The child ends after this command: it may exec it.
                    self.tail_ok = true;
                    let r = self.run_command(cmd);
                    self.exit_subshell(r)
                }
                Ok(sys::Forked::Parent(pid)) => {
                    self.job_joined(pid);
                    pids.push(pid);
                }
                Err(e) => {
                    self.error(&format!("fork: {e}"));
                    break;
                }
            }
            prev_read = next_read;
            drop(write);
        }
        drop(prev_read);
        let mut statuses = Vec::with_capacity(pids.len() + 1);
        for pid in pids {
            statuses.push(self.wait_child(pid));
        }
        statuses.extend(last_status);
        let status = if self.opts.pipefail {
            statuses
                .iter()
                .rev()
                .find(|&&s| s != 0)
                .copied()
                .unwrap_or(0)
        } else {
            statuses.last().copied().unwrap_or(0)
        };
        self.set_pipestatus(&statuses);
        Ok(status)
    }

    /// `PIPESTATUS`: the statuses of the last pipeline's commands (kept
    /// as numbers, and made an array only when read).
    pub fn set_pipestatus(&mut self, statuses: &[i32]) {
        self.pipestatus.clear();
        self.pipestatus.extend_from_slice(statuses);
    }

    /// `-v NAME` (`test`, `[[ ]]`): whether the variable, array element
    /// (`a[i]`, `m[key]`), positional or special parameter is set.
    pub fn is_set(&mut self, name: &[u8]) -> bool {
        self.is_set_as(name, true)
    }

    /// [`Shell::is_set`]; `as_written`: with `assoc_expand_once` a key is
    /// taken as written (`test -v`; `[[ -v ]]` expanded it once already).
    pub fn is_set_as(&mut self, name: &[u8], as_written: bool) -> bool {
        if let Some(open) = name.iter().position(|&c| c == b'[')
            && name.ends_with(b"]")
        {
            let (base, sub) = (&name[..open], &name[open + 1..name.len() - 1]);
            // Of an associative array, `@` and `*` are keys like any other
            // (bash 5.2).
            if let (b"@" | b"*", Some(Value::Assoc(m))) = (sub, self.vars.value(base)) {
                return m.contains_key(sub);
            }
            if matches!(sub, b"@" | b"*") {
                return self
                    .vars
                    .value(base)
                    .is_some_and(|v| !v.elements().is_empty());
            }
            // With `assoc_expand_once` a key is as written.
            let literal = as_written
                && self.keys_as_written()
                && matches!(self.vars.value(base), Some(Value::Assoc(_)));
            let key = if literal {
                Ok(crate::vars::Key::Name(sub.to_vec()))
            } else {
                self.runtime_subscript(base, sub)
                    .and_then(|sub| self.array_key(base, &sub))
            };
            return match key {
                Ok(key) => self.element(base, &key).is_some(),
                Err(_) => false,
            };
        }
        if name.first().is_some_and(u8::is_ascii_digit) {
            return match std::str::from_utf8(name)
                .ok()
                .and_then(|n| n.parse::<usize>().ok())
            {
                Some(0) => true,
                Some(i) => i <= self.positional.len(),
                None => false,
            };
        }
        if matches!(name, b"@" | b"*") {
            return !self.positional.is_empty();
        }
        self.param_value(name).is_some()
    }

    /// The file the running code comes from: the innermost frame's, else
    /// the top level's.
    pub fn current_file(&self) -> Rc<[u8]> {
        self.frames
            .last()
            .map_or_else(|| self.top_file.clone(), |f| f.file.clone())
    }

    /// The dynamic arrays, computed (`PIPESTATUS`, `FUNCNAME`,
    /// `BASH_SOURCE`, `BASH_LINENO`, `DIRSTACK`, `GROUPS`, `BASH_ALIASES`,
    /// `BASH_CMDS`): only for a name that [`Shell::is_dynamic`].
    fn special_array(&self, name: &[u8]) -> Option<Value> {
        let items: Vec<Vec<u8>> = match name {
            b"PIPESTATUS" => self
                .pipestatus
                .iter()
                .map(|s| s.to_string().into_bytes())
                .collect(),
            // Set only while a function runs; innermost first.
            b"FUNCNAME"
                if self
                    .frames
                    .iter()
                    .any(|f| f.name != b"main" && f.name != b"source") =>
            {
                self.frames.iter().rev().map(|f| f.name.clone()).collect()
            }
            b"FUNCNAME" => Vec::new(),
            b"BASH_SOURCE" => self.frames.iter().rev().map(|f| f.file.to_vec()).collect(),
            b"DIRSTACK" => crate::builtins::dir_stack(self),
            // Under extdebug: every frame's arguments, innermost frame
            // first and each frame's last argument first; and how many
            // each frame has.
            b"BASH_ARGV" => self
                .frame_args()
                .flat_map(|a| a.iter().rev().cloned())
                .collect(),
            b"BASH_ARGC" => self
                .frame_args()
                .map(|a| a.len().to_string().into_bytes())
                .collect(),
            b"BASH_LINENO" => self
                .frames
                .iter()
                .rev()
                .map(|f| f.call_line.to_string().into_bytes())
                .collect(),
            b"GROUPS" => nix::unistd::getgroups()
                .unwrap_or_default()
                .into_iter()
                .map(|g| g.as_raw().to_string().into_bytes())
                .collect(),
            b"BASH_ALIASES" => {
                // bash's alias table has 64 buckets (rush does not keep
                // the order aliases were defined in: by name within one).
                let mut all: Vec<_> = self.aliases.iter().collect();
                all.sort();
                let mut a = crate::assoc::Assoc::with_buckets(64);
                for (k, v) in all {
                    a.insert(k.to_vec(), v.to_vec());
                }
                return Some(Value::Assoc(a));
            }
            b"BASH_CMDS" => {
                // The hash table's own order.
                let mut all: Vec<_> = self.hash.iter().collect();
                all.sort_by_key(|(_, h)| h.seq);
                let mut a = crate::assoc::Assoc::with_buckets(HASH_BUCKETS);
                for (k, h) in all {
                    a.insert(k.clone(), h.path.as_bytes().to_vec());
                }
                return Some(Value::Assoc(a));
            }
            _ => return None,
        };
        Some(Value::Indexed(
            items
                .into_iter()
                .enumerate()
                .map(|(i, v)| (i as i64, v))
                .collect(),
        ))
    }

    // ---- commands ------------------------------------------------------

    pub fn run_command(&mut self, cmd: &Command) -> Exec {
        let procsubs = self.procsub_fds.len();
        let r = self.run_command_inner(cmd);
        if self.procsub_fds.len() > procsubs {
            // The command is done with its `<(…)` and `>(…)`: closing our
            // ends lets a writer see EPIPE and a reader see EOF.
            self.procsub_fds.truncate(procsubs);
            let mut last = self.procsub_last;
            self.procsub_pids.retain(|&pid| match sys::try_reap(pid) {
                None => true,
                Some(raw) => {
                    last = raw.map(|r| (pid, r)).or(last);
                    false
                }
            });
            self.procsub_last = last;
        }
        r
    }

    /// `<(list)` (`read`) or `>(list)`: runs the list in a child on one end
    /// of a pipe and returns the `/dev/fd/N` path of the other, which stays
    /// open (and is inherited) until the command that named it ends.
    pub fn process_substitution(&mut self, read: bool, list: &List) -> Result<Vec<u8>, Flow> {
        let (r, w) = match sys::pipe() {
            Ok(p) => p,
            Err(e) => {
                self.error(&format!("pipe: {e}"));
                return Err(Flow::Exit(1));
            }
        };
        match sys::fork() {
            Ok(sys::Forked::Child) => {
                self.become_subshell();
                let _ = sys::dup2(
                    if read { w.as_raw_fd() } else { r.as_raw_fd() },
                    i32::from(read),
                );
                drop(r);
                drop(w);
                self.tail_ok = true;
                self.xtrace_level += 1;
                let res = self.run_list(list);
                self.exit_subshell(res)
            }
            Ok(sys::Forked::Parent(pid)) => {
                let ours = if read { r } else { w };
                let fd = match sys::move_inheritable(ours, 63) {
                    Ok(fd) => fd,
                    Err(e) => {
                        self.error(&format!("process substitution: {e}"));
                        return Err(Flow::Exit(1));
                    }
                };
                let path = format!("/dev/fd/{}", fd.as_raw_fd()).into_bytes();
                self.procsub_fds.push(fd);
                self.procsub_pids.push(pid);
                self.last_bg = Some(pid);
                Ok(path)
            }
            Err(e) => {
                self.error(&format!("fork: {e}"));
                Err(Flow::Exit(1))
            }
        }
    }

    fn run_command_inner(&mut self, cmd: &Command) -> Exec {
        match cmd {
            Command::Simple(s) => self.run_simple(s),
            Command::Compound(c, redirects) => {
                self.tail_ok = false;
                if redirects.is_empty() {
                    return self.run_compound(c);
                }
                let saved = match self.redirect(redirects) {
                    Ok(s) => s,
                    Err(status) => {
                        if let Some(f) = self.redirect_flow.take() {
                            return Err(f);
                        }
                        // The compound's own failure: `set -e` and the ERR
                        // trap apply to it (see `run_and_or`).
                        self.compound_redirect_failed = true;
                        return Ok(status);
                    }
                };
                let stdin = reads_stdin(redirects);
                self.stdin_redirected += u32::from(stdin);
                let r = self.run_compound(c);
                self.stdin_redirected -= u32::from(stdin);
                self.restore(saved);
                r
            }
            Command::Function(f) => {
                self.tail_ok = false;
                // In POSIX mode a function's name must be a name, and not
                // a special builtin's; a script ends on either (bash).
                if self.opts.posix {
                    let msg = if !crate::parse::is_name(&f.name) {
                        Some("not a valid identifier")
                    } else if crate::builtins::is_special(&f.name, true) {
                        Some("is a special builtin")
                    } else {
                        None
                    };
                    if let Some(m) = msg {
                        self.line = f.end_line;
                        self.error(&format!("`{}': {m}", String::from_utf8_lossy(&f.name)));
                        return if self.opts.interactive {
                            Err(Flow::Abort(2))
                        } else {
                            Err(Flow::Exit(2))
                        };
                    }
                }
                if self.readonly_functions.contains(&f.name) {
                    self.line = f.end_line;
                    self.error(&format!(
                        "{}: readonly function",
                        String::from_utf8_lossy(&f.name)
                    ));
                    return Ok(1);
                }
                let file = self.current_file();
                self.function_files.insert(f.name.clone(), file);
                self.functions.insert(f.name.clone(), f.clone());
                if self.vars.is_exported_function(&f.name) {
                    self.export_function(&f.name, true);
                }
                Ok(0)
            }
        }
    }

    fn run_compound(&mut self, c: &Compound) -> Exec {
        match c {
            Compound::Brace(list) => self.run_list(list),
            Compound::Subshell(list) => self.run_subshell(list),
            Compound::If { arms, otherwise } => {
                for (cond, body) in arms {
                    self.errexit_off += 1;
                    let r = self.run_list(cond);
                    self.errexit_off -= 1;
                    if r? == 0 {
                        return self.run_list(body);
                    }
                }
                match otherwise {
                    Some(body) => self.run_list(body),
                    None => Ok(0),
                }
            }
            Compound::Loop { until, cond, body } => self.run_loop(*until, cond, body),
            Compound::For {
                var,
                words,
                body,
                line,
                select,
            } => {
                self.at_line(*line);
                // A name that is no identifier fails the loop when it runs
                // (bash), and ends a POSIX-mode script.
                if !crate::parse::is_name(var) {
                    self.error(&format!(
                        "`{}': not a valid identifier",
                        String::from_utf8_lossy(var)
                    ));
                    if self.opts.posix && !self.opts.interactive {
                        return Err(Flow::Exit(2));
                    }
                    return Ok(1);
                }
                let items = match words {
                    Some(ws) => self.expand_words(ws)?,
                    None => self.positional.clone(),
                };
                if *select {
                    if self.opts.xtrace
                        && let Some(ws) = words
                    {
                        self.trace_head(b"select", var, ws);
                    }
                    return self.run_select(var, &items, body);
                }
                let mut status = 0;
                self.loop_depth += 1;
                let r = (|| {
                    for item in items {
                        // bash runs the DEBUG trap for the `for` line before
                        // each round.
                        self.at_line(*line);
                        self.run_debug_trap(|| crate::unparse::compound(c))?;
                        if self.opts.xtrace
                            && let Some(ws) = words
                        {
                            self.trace_head(b"for", var, ws);
                        }
                        if let Err(e) = self.vars.set(var, item) {
                            self.error(&e.to_string());
                            return Ok(1);
                        }
                        match step(self.run_list(body)) {
                            Step::Done(s) => status = s,
                            Step::Break => break,
                            Step::Continue => status = 0,
                            Step::Leave(f) => return Err(f),
                        }
                    }
                    Ok(status)
                })();
                self.loop_depth -= 1;
                r
            }
            Compound::Case { word, arms, line } => {
                self.at_line(*line);
                self.run_debug_trap(|| crate::unparse::compound(c))?;
                if self.opts.xtrace {
                    // bash shows the word as written.
                    let mut text = b"case ".to_vec();
                    text.extend_from_slice(&crate::unparse::word(word));
                    text.extend_from_slice(b" in");
                    self.trace_line(&text);
                }
                let subject = self.expand_string(word)?;
                let mut status = 0;
                let mut i = 0;
                let mut fall = false;
                while i < arms.len() {
                    let arm = &arms[i];
                    let mut hit = fall;
                    if !hit {
                        for p in &arm.patterns {
                            let pat = self.expand_match_pattern(p)?;
                            if pat.matches(&subject) {
                                hit = true;
                                break;
                            }
                        }
                    }
                    if hit {
                        status = self.run_list(&arm.body)?;
                        match arm.end {
                            CaseEnd::Break => return Ok(status),
                            CaseEnd::FallThrough => fall = true,
                            CaseEnd::Continue => fall = false,
                        }
                    }
                    i += 1;
                }
                Ok(status)
            }
            Compound::ArithFor {
                init,
                cond,
                step: step_word,
                body,
                line,
            } => {
                // bash runs the DEBUG trap before each of the three parts.
                let debug = |sh: &mut Self| {
                    sh.at_line(*line);
                    sh.run_debug_trap(|| crate::unparse::compound(c))
                };
                debug(self)?;
                let t = self.expand_arith_text(init)?;
                self.trace_arith(&t);
                if self.arith_command("((", &t)?.is_none() {
                    return Ok(1);
                }
                let mut status = 0;
                self.loop_depth += 1;
                let r = (|| loop {
                    debug(self)?;
                    let c = self.expand_arith_text(cond)?;
                    self.trace_arith(&c);
                    match self.arith_command("((", &c)? {
                        None => return Ok(1),
                        Some(0) => return Ok(status),
                        Some(_) => {}
                    }
                    match step(self.run_list(body)) {
                        Step::Done(s) => status = s,
                        Step::Break => return Ok(status),
                        Step::Continue => {}
                        Step::Leave(f) => return Err(f),
                    }
                    debug(self)?;
                    let t = self.expand_arith_text(step_word)?;
                    self.trace_arith(&t);
                    if self.arith_command("((", &t)?.is_none() {
                        return Ok(1);
                    }
                })();
                self.loop_depth -= 1;
                r
            }
            Compound::Arith { expr, line } => {
                self.at_line(*line);
                self.run_debug_trap(|| crate::unparse::compound(c))?;
                let text = self.expand_arith_text(expr)?;
                if self.opts.xtrace {
                    self.trace_arith(&text);
                }
                Ok(match self.arith_command("((", &text)? {
                    Some(v) => i32::from(v == 0),
                    None => 1,
                })
            }
            Compound::Coproc { name, cmd } => self.run_coproc(name, cmd),
            Compound::DoubleBracket { words, line } => {
                self.at_line(*line);
                self.run_debug_trap(|| crate::unparse::compound(c))?;
                crate::test::double_bracket(self, words)
            }
        }
    }

    fn run_loop(&mut self, until: bool, cond: &List, body: &List) -> Exec {
        let mut status = 0;
        self.loop_depth += 1;
        let r = (|| loop {
            self.errexit_off += 1;
            let c = self.run_list(cond);
            self.errexit_off -= 1;
            match step(c) {
                Step::Done(c) if (c == 0) == until => return Ok(status),
                Step::Done(_) => {}
                Step::Break => return Ok(status),
                Step::Continue => continue,
                Step::Leave(f) => return Err(f),
            }
            match step(self.run_list(body)) {
                Step::Done(s) => status = s,
                Step::Break => return Ok(status),
                Step::Continue => {}
                Step::Leave(f) => return Err(f),
            }
        })();
        self.loop_depth -= 1;
        r
    }

    /// `coproc NAME cmd`: `cmd` in the background, its input from a pipe
    /// whose write end is `NAME[1]`, its output to one whose read end is
    /// `NAME[0]` (close-on-exec, at 63 and 60, as bash puts them);
    /// `NAME_PID` and `$!` are its pid. When it is reaped, NAME and
    /// NAME_PID are unset and the ends closed ([`Shell::coproc_done`]).
    fn run_coproc(&mut self, name: &[u8], cmd: &Command) -> Exec {
        let pipes = sys::pipe().and_then(|to| Ok((to, sys::pipe()?)));
        let ((to_read, to_write), (from_read, from_write)) = match pipes {
            Ok(p) => p,
            Err(e) => {
                self.error(&format!("coproc: pipe: {e}"));
                return Ok(1);
            }
        };
        match sys::fork() {
            Ok(sys::Forked::Child) => {
                self.become_subshell();
                let _ = sys::dup2(to_read.as_raw_fd(), 0);
                let _ = sys::dup2(from_write.as_raw_fd(), 1);
                drop((to_read, to_write, from_read, from_write));
                // The shell's other coprocesses' ends are not this one's.
                for c in std::mem::take(&mut self.coprocs) {
                    close_coproc_ends(&c);
                }
                let r = self.run_command(cmd);
                self.exit_subshell(r)
            }
            Ok(sys::Forked::Parent(pid)) => {
                drop((to_read, from_write));
                // Where bash puts them: the read end at 63, the write end
                // at 60 (or the highest free below).
                let ends = (
                    sys::move_high_cloexec(from_read, 63),
                    sys::move_high_cloexec(to_write, 60),
                );
                let (read_end, write_end) = match ends {
                    (Ok(r), Ok(w)) => (r, w),
                    (Err(e), _) | (_, Err(e)) => {
                        self.error(&format!("coproc: {e}"));
                        return Ok(1);
                    }
                };
                let fds = [read_end.as_raw_fd(), write_end.as_raw_fd()];
                let value = crate::vars::Value::Indexed(
                    fds.iter()
                        .enumerate()
                        .map(|(k, fd)| (k as i64, fd.to_string().into_bytes()))
                        .collect(),
                );
                let pid_var = [name, b"_PID"].concat();
                if let Err(e) = self
                    .vars
                    .set_value(name, value)
                    .and_then(|()| self.vars.set(&pid_var, pid.to_string().into_bytes()))
                {
                    self.error(&e.to_string());
                }
                let keep = |fd: OwnedFd| {
                    let id = file_id(fd.as_raw_fd()).unwrap_or_default();
                    (std::os::fd::IntoRawFd::into_raw_fd(fd), id)
                };
                self.coprocs.push(Coproc {
                    pid,
                    name: name.to_vec(),
                    fds: [keep(read_end), keep(write_end)],
                });
                let text = format!("coproc {}", String::from_utf8_lossy(name));
                self.add_background_job(pid, text);
                Ok(0)
            }
            Err(e) => {
                self.error(&format!("fork: {e}"));
                Ok(1)
            }
        }
    }

    /// `pid`, started in the background: `$!`, and a job to wait for.
    fn add_background_job(&mut self, pid: i32, command: String) {
        self.last_bg = Some(pid);
        let id = self.next_job_id();
        let pgid = if self.job_control() { pid } else { 0 };
        self.jobs.push(Job {
            id,
            pids: vec![pid],
            done: HashMap::default(),
            command,
            pgid,
            stopped: None,
            foreground: false,
            notified: true,
            waited: false,
        });
        // An interactive shell says which job and process it started.
        if self.opts.interactive && !self.subshell {
            self.err_out(format!("[{id}] {pid}\n").as_bytes());
        }
    }

    /// A redirection closed or moved `fd`: if it was a coprocess's end,
    /// its element of NAME becomes -1 (bash).
    fn coproc_end_closed(&mut self, fd: RawFd) {
        if self.coprocs.is_empty() {
            return;
        }
        let mut hit = None;
        for c in &self.coprocs {
            if let Some(i) = c.fds.iter().position(|(f, _)| *f == fd) {
                hit = Some((c.name.clone(), i));
            }
        }
        if let Some((name, i)) = hit {
            let _ = self
                .vars
                .set_elem(&name, crate::vars::Key::Index(i as i64), b"-1".to_vec());
        }
    }

    /// A coprocess was reaped: its variables go, and its ends are closed
    /// (unless the user moved them).
    pub fn coproc_done(&mut self, pid: i32) {
        if let Some(k) = self.coprocs.iter().position(|c| c.pid == pid) {
            let c = self.coprocs.remove(k);
            close_coproc_ends(&c);
            let _ = self.vars.unset(&c.name);
            let _ = self.vars.unset(&[c.name.as_slice(), b"_PID"].concat());
        }
    }

    fn run_subshell(&mut self, list: &List) -> Exec {
        let group = self.job_pgrp();
        match sys::fork() {
            Ok(sys::Forked::Child) => {
                if let Some(g) = group {
                    g.join_from_child();
                }
                self.become_subshell();
                self.tail_ok = true;
                self.exit_builtin = false;
                let r = self.run_list(list);
                // bash: when the subshell's whole body is one `!` pipeline,
                // the `!` applies to the status of an error that abandoned
                // it too (`( ! echo $((1/0)) )` exits 0), though not to
                // `exit`'s or a failed `exec`'s (`execute_in_subshell`'s
                // `invert`).
                let r = match r {
                    Err(Flow::Abort(_) | Flow::Exit(_))
                        if !self.exit_builtin && is_one_inverted_pipeline(list) =>
                    {
                        Ok(0)
                    }
                    r => r,
                };
                self.exit_subshell(r)
            }
            Ok(sys::Forked::Parent(pid)) => {
                self.job_joined(pid);
                Ok(self.wait_child(pid))
            }
            Err(e) => {
                self.error(&format!("fork: {e}"));
                Ok(1)
            }
        }
    }

    /// `$(…)`: runs `list` with its output captured; trailing newlines go.
    pub fn command_sub(&mut self, list: &List) -> Result<Vec<u8>, Flow> {
        let mut out = Vec::new();
        if let Some(status) = self.command_sub_in_process(list, &mut out)? {
            self.cmdsub_status = Some(status);
            self.status = status;
        } else {
            let (r, w) = match sys::pipe() {
                Ok(p) => p,
                Err(e) => {
                    self.error(&format!("pipe: {e}"));
                    return Ok(Vec::new());
                }
            };
            match sys::fork() {
                Ok(sys::Forked::Child) => {
                    drop(r);
                    self.become_subshell();
                    // bash: a command substitution does not inherit `set -e`,
                    // unless `shopt -s inherit_errexit` or POSIX mode.
                    if !self.opts.posix && !crate::builtins::shopt_on(self, "inherit_errexit") {
                        self.opts.errexit = false;
                    }
                    let _ = sys::dup2(w.as_raw_fd(), 1);
                    drop(w);
                    self.tail_ok = true;
                    self.xtrace_level += 1;
                    // bash reads the text again when it runs it, from the
                    // line of the command it is in (its line as bash
                    // counts it: where the token after the first word ends).
                    if let Some(first) = first_line(list) {
                        let shift = i64::from(self.line) - i64::from(first);
                        self.line_shift = i32::try_from(shift).unwrap_or(0);
                    }
                    let res = self.run_list(list);
                    self.exit_subshell(res)
                }
                Ok(sys::Forked::Parent(pid)) => {
                    drop(w);
                    let _ = sys::read_to_end(&r, &mut out);
                    drop(r);
                    let status = match sys::wait_pid(pid, false) {
                        Ok(sys::Waited::Done(raw)) => sys::status_of(raw),
                        _ => 127,
                    };
                    self.cmdsub_status = Some(status);
                    self.status = status;
                }
                Err(e) => {
                    self.error(&format!("fork: {e}"));
                    return Ok(Vec::new());
                }
            }
        }
        while out.last() == Some(&b'\n') {
            out.pop();
        }
        Ok(out)
    }

    /// Runs a command substitution without forking when it is one simple
    /// command naming a builtin that only prints (`pwd`, `echo`, `printf`
    /// without -v). Returns its status, or `None` if it needs a subshell.
    fn command_sub_in_process(
        &mut self,
        list: &List,
        out: &mut Vec<u8>,
    ) -> Result<Option<i32>, Flow> {
        let [item] = list.items.as_slice() else {
            return Ok(None);
        };
        if item.background || !item.and_or.rest.is_empty() {
            return Ok(None);
        }
        let p = &item.and_or.first;
        let [Command::Simple(s)] = p.commands.as_slice() else {
            return Ok(None);
        };
        // `$(< file)`: the file's contents, read by the shell (bash).
        if let (false, true, true, [r]) = (
            p.bang,
            s.assigns.is_empty(),
            s.words.is_empty(),
            s.redirects.as_slice(),
        ) && r.op == RedirOp::In
            && r.fd.unwrap_or(0) == 0
            && r.var.is_none()
            && let RedirTarget::Word(w) = &r.target
        {
            self.subshell_level += 1;
            let target = self.expand_redirect_target(w);
            self.subshell_level -= 1;
            let path = match target {
                Ok(path) => path,
                Err(msg) => {
                    if let Some(m) = msg {
                        self.error(&m);
                    }
                    return Ok(Some(1));
                }
            };
            return Ok(Some(
                match std::fs::read(std::ffi::OsStr::from_bytes(&path)) {
                    Ok(bytes) => {
                        out.extend_from_slice(&bytes);
                        0
                    }
                    Err(e) => {
                        self.error(&format!(
                            "{}: {}",
                            String::from_utf8_lossy(&path),
                            io_text(&e)
                        ));
                        1
                    }
                },
            ));
        }
        if p.bang || !s.assigns.is_empty() || !s.redirects.is_empty() || s.words.is_empty() {
            return Ok(None);
        }
        let Some(name) = s.words[0].as_plain() else {
            return Ok(None);
        };
        if !matches!(
            name,
            b"pwd" | b"echo" | b"printf" | b"true" | b"false" | b":"
        ) || self.functions.contains_key(name)
            || !crate::builtins::is_builtin(self, name)
            || self.opts.xtrace
        {
            return Ok(None);
        }
        // Arguments must expand without side effects of their own.
        if s.words[1..]
            .iter()
            .any(|w| !w.parts.iter().all(is_pure_part))
        {
            return Ok(None);
        }
        // The words expand as they would in the forked subshell.
        self.subshell_level += 1;
        let args = self.expand_words(&s.words);
        self.subshell_level -= 1;
        let args = args?;
        if args.first().map(Vec::as_slice) == Some(b"printf".as_slice())
            && args.get(1).is_some_and(|a| a.starts_with(b"-v"))
        {
            return Ok(None);
        }
        let old = self.capture.replace(Vec::new());
        let r = crate::builtins::run_builtin(self, &args);
        let captured = std::mem::replace(&mut self.capture, old).unwrap_or_default();
        out.extend_from_slice(&captured);
        match r {
            Some(Ok(s)) => Ok(Some(s)),
            Some(Err(Flow::Exit(s))) => Ok(Some(s)),
            Some(Err(_)) => Ok(Some(1)),
            None => Ok(None),
        }
    }

    /// Enters the command at `line` of its text (for messages and LINENO).
    fn at_line(&mut self, line: u32) {
        self.line = line.saturating_add_signed(self.line_shift);
    }

    // ---- simple commands -----------------------------------------------

    fn run_simple(&mut self, cmd: &Simple) -> Exec {
        // What an alias to nothing left: no command, the status stays.
        if cmd.words.is_empty() && cmd.assigns.is_empty() && cmd.redirects.is_empty() {
            return Ok(self.status);
        }
        // `set -k`: assignment words after the command name are
        // assignments too, for its environment (bash).
        if self.opts.keyword
            && cmd
                .words
                .iter()
                .any(|w| crate::parse::split_assignment(w).is_some())
        {
            let mut c = cmd.clone();
            c.words.clear();
            for w in &cmd.words {
                match crate::parse::split_assignment(w) {
                    Some(a) => c.assigns.push(a),
                    None => c.words.push(w.clone()),
                }
            }
            return self.run_simple(&c);
        }
        let outer = self.current_simple.replace(std::ptr::NonNull::from(cmd));
        let r = self.run_simple_now(cmd);
        self.current_simple = outer;
        r
    }

    /// `$BASH_COMMAND` as read now.
    pub fn bash_command(&self) -> Vec<u8> {
        match self.current_simple {
            // SAFETY: `current_simple` points to the command of a
            // `run_simple` call still on the stack (it is restored before
            // that call returns), whose `&Simple` borrow keeps it alive.
            Some(p) if !self.in_trap() => crate::unparse::simple(unsafe { p.as_ref() }),
            _ => self.bash_command.clone(),
        }
    }

    fn run_simple_now(&mut self, cmd: &Simple) -> Exec {
        let tail = std::mem::take(&mut self.tail_ok);
        self.at_line(cmd.line);
        if !self.traps.is_empty() && !self.in_trap() {
            // For the ERR and EXIT traps, which run after the command.
            self.bash_command = crate::unparse::simple(cmd);
        }
        if self.run_debug_trap(|| crate::unparse::simple(cmd))? {
            return Ok(self.status);
        }
        self.cmdsub_status = None;
        let t0 = self.perf.as_ref().map(|_| std::time::Instant::now());
        let argv = self.expand_command_words(&cmd.words)?;
        // The function just entered no longer names messages (bash's
        // `this_command_name` moves on).
        self.fresh_call = false;
        // `$_` is the previous command's last argument while this one
        // expands, and this one's afterwards.
        self.last_arg = argv.last().cloned().unwrap_or_default();
        if argv.is_empty() {
            // Assignments (and redirections) only. The redirections come
            // first (if one fails, nothing is assigned) and stay while the
            // values expand: `x=$(cmd) 2>/dev/null` silences cmd.
            let saved = if cmd.redirects.is_empty() {
                None
            } else {
                match self.redirect(&cmd.redirects) {
                    Ok(saved) => Some(saved),
                    Err(s) => return self.redirect_flow.take().map_or(Ok(s), Err),
                }
            };
            let mut failed = None;
            for a in &cmd.assigns {
                if let Err(f) = self.assign_as(a, false, self.opts.xtrace, false) {
                    failed = Some(f);
                    break;
                }
            }
            if let Some(saved) = saved {
                self.restore(saved);
            }
            if let Some(f) = failed {
                return if self.opts.interactive { Ok(1) } else { Err(f) };
            }
            return Ok(self.cmdsub_status.unwrap_or(0));
        }
        if let (Some(p), Some(t0)) = (self.perf.as_mut(), t0) {
            p.record(crate::perf::Phase::Expand, t0.elapsed());
        }
        // Values of prefix assignments, each visible to the ones after it.
        let mut assigns = Vec::with_capacity(cmd.assigns.len());
        let mut undo = Vec::new();
        let mut refused = false;
        for a in &cmd.assigns {
            // Before a command, an element is no name to bind (bash
            // reports it and runs the command), and an array is dropped.
            if let Some(i) = &a.index {
                let shown = [a.name.as_slice(), b"[", &crate::unparse::word(i), b"]"].concat();
                self.error(&format!(
                    "`{}': not a valid identifier",
                    String::from_utf8_lossy(&shown)
                ));
                continue;
            }
            if a.array.is_some() {
                continue;
            }
            let v = self.assign_value(a)?;
            refused |= self.vars.is_readonly(&a.name);
            undo.extend(self.push_temp_vars(&[(a.name.clone(), v.clone())], true));
            assigns.push((a.name.clone(), v));
        }
        self.pop_temp_vars(undo);
        // In POSIX mode a refused prefix assignment is an assignment error:
        // the command does not run and the rest of the line is abandoned;
        // before a special builtin the shell leaves (bash).
        if refused && self.opts.posix {
            self.status = 1;
            if crate::builtins::is_special(&argv[0], true) && !self.opts.interactive {
                // bash's FORCE_EOF: 127 at the top of `-c`.
                let s = if self.opts.command_mode && !self.subshell {
                    127
                } else {
                    1
                };
                return Err(Flow::Exit(s));
            }
            return Err(Flow::Abort(1));
        }
        if self.opts.xtrace {
            self.trace(&cmd.assigns, &assigns, &argv);
        }
        let name = argv[0].clone();
        // Special builtins: errors are fatal, and in POSIX mode their
        // prefix assignments stay (in bash's own mode they last for the
        // command, as for any builtin, and so do those before `declare`,
        // `local` and `typeset`). The redirections come first, as bash
        // performs them before the assignments (`a=9 eval cmd >&$a` uses
        // the a from before).
        if crate::builtins::is_special(&name, self.opts.posix) {
            let saved = match self.redirect(&cmd.redirects) {
                Ok(s) => s,
                Err(s) => {
                    if let Some(f) = self.redirect_flow.take() {
                        return Err(f);
                    }
                    // A failed redirection ends the shell in POSIX mode
                    // only (bash).
                    return if self.opts.interactive || !self.opts.posix {
                        Ok(s)
                    } else {
                        Err(Flow::Exit(s))
                    };
                }
            };
            let mut temp = None;
            if self.opts.posix {
                for (k, v) in &assigns {
                    // They stay, exported, as bash merges its temporary
                    // environment.
                    if let Err(e) = self.vars.set(k, v.clone()) {
                        self.error(&e.to_string());
                        self.restore(saved);
                        return Err(Flow::Exit(1));
                    }
                    let _ = self.vars.export(k, None);
                    // `v=1 f` then `v=2 return` in f: v is 2 after f.
                    if self.prefix_bound.contains(&(self.func_depth, k.clone())) {
                        let _ = self.vars.set_in_caller(k, v.clone());
                    }
                }
            } else if !assigns.is_empty() {
                temp = Some(self.push_temp_vars(&assigns, false));
            }
            let exported = if temp.is_some() && observes_temp_env(&name, &argv) {
                self.export_temps(&assigns)
            } else {
                Vec::new()
            };
            if name == b"exec" && (argv.len() == 1 || argv.len() == 2 && argv[1] == b"--") {
                // `exec` alone: its redirections stay.
                self.forget(saved);
                if let Some(undo) = temp {
                    self.pop_temp_vars(undo);
                }
                return Ok(0);
            }
            if name == b"exec" {
                self.exec_env.clone_from(&assigns);
            }
            // `export v` or `readonly v` in a function called as `v=t f`:
            // v outlasts the call, in the caller's scope (bash's
            // att_propagate).
            if matches!(name.as_slice(), b"export" | b"readonly") && !self.prefix_bound.is_empty() {
                for a in argv[1..].iter().filter(|a| !a.starts_with(b"-")) {
                    let n = a.split(|&c| c == b'=').next().unwrap_or_default();
                    if self.is_prefix_bound(n) {
                        self.propagate.push((self.func_depth, n.to_vec()));
                    }
                }
            }
            let via = std::mem::replace(&mut self.via_command, false);
            let r = crate::builtins::run_builtin(self, &argv).unwrap_or(Ok(127));
            self.via_command = via;
            self.exec_env.clear();
            if let Some(mut undo) = temp {
                self.keep_promoted(&argv, &mut undo);
                self.unexport_temps(exported, &undo);
                self.pop_temp_vars(undo);
            }
            self.restore(saved);
            return r;
        }
        if let Some(f) = self.functions.get(&name).cloned() {
            return self.call_function(&f, &argv, &assigns, &cmd.redirects);
        }
        if crate::builtins::is_builtin(self, &name) {
            let saved = match self.redirect(&cmd.redirects) {
                Ok(s) => s,
                Err(s) => return self.redirect_flow.take().map_or(Ok(s), Err),
            };
            // `command exec >file`: exec alone, its redirections stay.
            if name == b"command" && argv.len() == 2 && argv[1] == b"exec" {
                self.forget(saved);
                return Ok(0);
            }
            // `z=y local z` in a function: names that were not local yet.
            let declares = self.vars.in_function()
                && !assigns.is_empty()
                && matches!(name.as_slice(), b"local" | b"declare" | b"typeset");
            // (A function call's own prefix binding, `z=42 f`, counts as
            // not local: bash keeps it in a layer of its own.)
            let fresh: Vec<bool> = if declares {
                assigns
                    .iter()
                    .map(|(k, _)| {
                        !self.vars.local_here(k)
                            || self.prefix_bound.contains(&(self.func_depth, k.clone()))
                    })
                    .collect()
            } else {
                Vec::new()
            };
            let mut old = self.push_temp_vars(&assigns, false);
            let exported = if observes_temp_env(&name, &argv) {
                self.export_temps(&assigns)
            } else {
                Vec::new()
            };
            let r = crate::builtins::run_builtin(self, &argv).unwrap_or(Ok(127));
            self.keep_promoted(&argv, &mut old);
            if declares {
                self.settle_temp_locals(&assigns, &fresh, &mut old);
            }
            self.unexport_temps(exported, &old);
            self.pop_temp_vars(old);
            self.restore(saved);
            return r;
        }
        self.run_external(&argv, &assigns, &cmd.redirects, tail)
    }

    /// Performs an assignment (`x=v`, `a[i]=v`, `a=(…)`, with `+=`), in
    /// the innermost function scope if `local`.
    pub fn assign(&mut self, a: &Assign, local: bool) -> Result<(), Flow> {
        self.assign_as(a, local, false, true)
    }

    /// [`Shell::assign`]; with `trace`, a line of `set -x` for it, as bash
    /// writes one for each assignment statement: the name, `=` or `+=`,
    /// and the value as expanded (before appending).
    fn assign_as(
        &mut self,
        a: &Assign,
        local: bool,
        trace: bool,
        declared: bool,
    ) -> Result<(), Flow> {
        // `r=(…)` or `r[0]=x` where r names an element (`declare -n
        // r='a[@]'`): not a variable to assign an array to (bash).
        if (a.array.is_some() && !local || a.index.is_some())
            && let Some(t) = self.vars.resolve(&a.name).filter(|t| t.contains(&b'['))
        {
            self.error(&format!(
                "`{}': not a valid identifier",
                String::from_utf8_lossy(&t)
            ));
            return Err(Flow::Abort(1));
        }
        if let (Some(idx), Some(_)) = (&a.index, &a.array) {
            let msg = format!(
                "{}[{}]: cannot assign list to array member",
                String::from_utf8_lossy(&a.name),
                String::from_utf8_lossy(&crate::unparse::word(idx))
            );
            return Err(self.expansion_error(&msg));
        }
        let r = if let Some(items) = &a.array {
            if trace {
                self.trace_assign(a, a.append, None);
            }
            let value = self.array_value(&a.name, items, a.append, declared)?;
            let value = if self.vars.is_integer(&a.name) {
                // `declare -i`: each element is arithmetic.
                let mut each = |v: &Vec<u8>| -> Result<Vec<u8>, Flow> {
                    Ok(self.arith(v)?.to_string().into_bytes())
                };
                match value {
                    Value::Indexed(m) => Value::Indexed(
                        m.iter()
                            .map(|(k, v)| Ok((*k, each(v)?)))
                            .collect::<Result<_, Flow>>()?,
                    ),
                    Value::Assoc(m) => Value::Assoc(m.try_map_values(|v| each(&v.to_vec()))?),
                    other => other,
                }
            } else {
                value
            };
            if local {
                self.vars.local_value(&a.name, Some(value))
            } else {
                self.vars.set_value(&a.name, value)
            }
        } else if let Some(idx) = &a.index {
            let sub = self.expand_subscript_text(idx)?;
            // `a[]=x`, and `a[*]=x` but for an associative array: refused.
            let assoc = matches!(self.vars.value(&a.name), Some(Value::Assoc(_)));
            if sub.is_empty() || !assoc && matches!(sub.as_slice(), b"*" | b"@") {
                let msg = format!(
                    "{}[{}]: bad array subscript",
                    String::from_utf8_lossy(&a.name),
                    String::from_utf8_lossy(&crate::unparse::word(idx))
                );
                return Err(self.expansion_error(&msg));
            }
            let key = self.array_key(&a.name, &sub)?;
            if key.before_start() {
                let msg = format!(
                    "{}[{}]: bad array subscript",
                    String::from_utf8_lossy(&a.name),
                    String::from_utf8_lossy(&crate::unparse::word(idx))
                );
                return Err(self.expansion_error(&msg));
            }
            let v = self.expand_assignment(&a.value)?;
            if trace {
                self.trace_assign(a, a.append, Some(&v));
            }
            let old = a
                .append
                .then(|| self.element(&a.name, &key).unwrap_or_default());
            let integer = self.vars.is_integer(&a.name);
            let v = self.assigned(old, v, integer)?;
            // `DIRSTACK[n]=dir` changes entry n of the directory stack
            // (bash; entry 0, the current directory, stays).
            if a.name == b"DIRSTACK"
                && self.is_dynamic(&a.name)
                && let crate::vars::Key::Index(n) = key
            {
                if let Some(slot) = usize::try_from(n)
                    .ok()
                    .and_then(|n| n.checked_sub(1))
                    .and_then(|n| self.dir_stack.get_mut(n))
                {
                    *slot = v;
                }
                return Ok(());
            }
            // `BASH_CMDS[n]=path` and `BASH_ALIASES[n]=text` change the
            // tables they show (bash).
            if let crate::vars::Key::Name(k) = &key
                && matches!(a.name.as_slice(), b"BASH_CMDS" | b"BASH_ALIASES")
                && self.is_dynamic(&a.name)
            {
                if a.name == b"BASH_CMDS" {
                    if !crate::builtins::restricted_hash_target(self, "", &v) {
                        return Err(Flow::Abort(1));
                    }
                    if let Ok(c) = CString::new(v) {
                        self.hash_insert(k, c, 0);
                    }
                } else {
                    Rc::make_mut(&mut self.aliases).insert(k.clone(), v);
                }
                return Ok(());
            }
            self.vars.set_elem(&a.name, key, v)
        } else if let Some((base, sub)) = self
            .vars
            .resolve(&a.name)
            .and_then(|t| split_element(&t))
            .filter(|_| !local)
        {
            // Through a nameref to an element (`declare -n r='m[k]'; r=v`).
            let v = self.assign_value_as(a, false, trace)?;
            let sub = self.runtime_subscript(&base, &sub)?;
            let key = self.array_key(&base, &sub)?;
            self.vars.set_elem(&base, key, v)
        } else {
            let v = self.assign_value_as(a, false, trace)?;
            if local {
                self.vars.local(&a.name, Some(v))
            } else {
                self.assigned_dynamic(&a.name, &v);
                self.vars.set(&a.name, v)
            }
        };
        // Assigning to a read-only variable abandons the rest of the line
        // (bash; with `set -e` or in POSIX mode the shell leaves).
        r.map_err(|e| self.expansion_error(&e.to_string()))
    }

    /// The value of `name=(…)`.
    /// The value of `name=(…)`; `declared`: an argument of a declaration
    /// builtin (whose messages show a word single-quoted, as bash's).
    fn array_value(
        &mut self,
        name: &[u8],
        items: &[Element],
        append: bool,
        declared: bool,
    ) -> Result<Value, Flow> {
        let integer = self.vars.is_integer(name);
        if let Some(Value::Assoc(old)) = self.vars.value(name) {
            // Replaced, the table keeps its size (bash), and so its order.
            let mut m = if append {
                old.clone()
            } else {
                crate::assoc::Assoc::with_buckets(old.buckets())
            };
            // `A=(k1 v1 k2 v2)`: when the first element is no `[key]=`,
            // the words are keys and values in turn, each expanded as a
            // subscript (bash 5.1).
            if let Some(first) = items.first()
                && first.key.is_none()
                && !first.value.unquoted_text().starts_with(b"[")
            {
                let mut words = Vec::with_capacity(items.len());
                let mut written = Vec::with_capacity(items.len());
                for e in items {
                    let mut w = Vec::new();
                    written.push(crate::unparse::word(&e.value));
                    if let Some(k) = &e.key {
                        w.push(b'[');
                        w.extend_from_slice(&self.expand_index_text(k)?);
                        w.extend_from_slice(if e.append { b"]+=" } else { b"]=" });
                    }
                    w.extend_from_slice(&self.expand_index_text(&e.value)?);
                    words.push(w);
                }
                let mut it = words.into_iter().zip(written);
                while let Some((k, shown)) = it.next() {
                    let v = it.next().map(|(v, _)| v).unwrap_or_default();
                    if k.is_empty() {
                        let msg =
                            format!("{}: bad array subscript", String::from_utf8_lossy(&shown));
                        self.error(&msg);
                        continue;
                    }
                    m.insert(k, v);
                }
                return Ok(Value::Assoc(m));
            }
            for Element {
                key,
                value: w,
                append,
            } in items
            {
                let Some(key) = key else {
                    let written = crate::unparse::word(w);
                    let shown = if declared {
                        String::from_utf8_lossy(&crate::builtins::single_quote(&written))
                            .into_owned()
                    } else {
                        String::from_utf8_lossy(&written).into_owned()
                    };
                    self.error(&format!(
                        "{}: {shown}: must use subscript when assigning associative array",
                        String::from_utf8_lossy(name)
                    ));
                    continue;
                };
                // A key is a subscript: no tilde expansion (bash).
                let k = self.expand_index_text(key)?;
                let mut v = self.expand_assignment(w)?;
                if *append {
                    v = self.assigned(Some(m.get(&k).cloned().unwrap_or_default()), v, integer)?;
                }
                m.insert(k, v);
            }
            return Ok(Value::Assoc(m));
        }
        let mut m = match (append, self.vars.value(name)) {
            (true, Some(Value::Indexed(old))) => old.clone(),
            (true, Some(Value::Str(s))) => [(0, s.clone())].into_iter().collect(),
            _ => Default::default(),
        };
        let mut next = m.keys().next_back().map_or(0, |k| k + 1);
        // bash's order: every value is expanded first, left to right; then
        // each index, with the elements assigned before it in place
        // (`a=([0]=3 [a[0]]=x)`).
        let mut values = Vec::with_capacity(items.len());
        for e in items {
            values.push(match e.key {
                Some(_) => vec![self.expand_assignment(&e.value)?],
                None => self.expand_words(std::slice::from_ref(&e.value))?,
            });
        }
        for (e, vals) in items.iter().zip(values) {
            match &e.key {
                Some(k) => {
                    // An empty index, `*` or `@`, and one before the start
                    // are refused, element by element (bash).
                    let refuse = |sh: &mut Self, why: &str| {
                        let msg = format!(
                            "[{}]={}: {why}",
                            String::from_utf8_lossy(&crate::unparse::word(k)),
                            String::from_utf8_lossy(&crate::unparse::word(&e.value))
                        );
                        sh.error(&msg);
                    };
                    let mut bad = None;
                    // An index that reads the array sees it as assigned so
                    // far, and a bad index leaves it so (bash).
                    let i = match self.expand_subscript_text(k).and_then(|mut t| {
                        // bash's internal quoting drops \x01 from these
                        // subscripts (`a=([$'1\0012']=x)` sets `a[12]`).
                        t.retain(|&c| c != 1);
                        if t.is_empty() {
                            bad = Some("bad array subscript");
                            return Ok(0);
                        }
                        if matches!(t.as_slice(), b"*" | b"@") {
                            bad = Some("cannot assign to non-numeric index");
                            return Ok(0);
                        }
                        if t.windows(name.len()).any(|w| w == name) {
                            let _ = self.vars.set_value(name, Value::Indexed(m.clone()));
                        }
                        self.arith(&t)
                    }) {
                        Ok(i) if i < 0 => {
                            let end = m.keys().next_back().map_or(0, |k| k + 1);
                            if end + i < 0 {
                                bad = Some("bad array subscript");
                            }
                            end + i
                        }
                        Ok(i) => i,
                        Err(e) => {
                            let _ = self.vars.set_value(name, Value::Indexed(m));
                            return Err(e);
                        }
                    };
                    if let Some(why) = bad {
                        refuse(self, why);
                        continue;
                    }
                    let mut v = vals.into_iter().next().unwrap_or_default();
                    if e.append {
                        v = self.assigned(
                            Some(m.get(&i).cloned().unwrap_or_default()),
                            v,
                            integer,
                        )?;
                    }
                    m.insert(i, v);
                    next = i + 1;
                }
                None => {
                    for field in vals {
                        m.insert(next, field);
                        next += 1;
                    }
                }
            }
        }
        Ok(Value::Indexed(m))
    }

    /// What an assignment of `v` stores: with `+=` (`old` given), `v`
    /// appended to `old`; for an integer variable the arithmetic value,
    /// `+=` adding.
    pub(crate) fn assigned(
        &mut self,
        old: Option<Vec<u8>>,
        v: Vec<u8>,
        integer: bool,
    ) -> Result<Vec<u8>, Flow> {
        if integer {
            let mut n = self.arith(&v)?;
            if let Some(old) = old {
                n = n.wrapping_add(self.arith(&old)?);
            }
            return Ok(n.to_string().into_bytes());
        }
        Ok(match old {
            Some(mut old) => {
                old.extend_from_slice(&v);
                old
            }
            None => v,
        })
    }

    /// `declare [flags] name=(…)` (and `local`, `readonly`, `export`): the
    /// array attributes the flags give come first, then the elements.
    pub fn declare_array(&mut self, a: &Assign, flags: &[u8], local: bool) -> Result<(), Flow> {
        if flags.contains(&b'A') && !matches!(self.vars.value(&a.name), Some(Value::Assoc(_))) {
            let empty = if local {
                Value::Assoc(Default::default())
            } else {
                self.vars.new_assoc(&a.name)
            };
            let r = if local {
                self.vars.local_value(&a.name, Some(empty))
            } else {
                self.vars.set_value(&a.name, empty)
            };
            if let Err(e) = r {
                self.error(&e.to_string());
                return Err(Flow::Exit(1));
            }
        }
        // `declare -ai a=(1+1)`: the elements are arithmetic, so
        // the attribute comes first, as in bash (on the local, for
        // `local -ai`).
        let attributes = flags
            .iter()
            .any(|&c| c == b'i' || crate::vars::Case::of_flag(c).is_some());
        if local
            && attributes
            && let Err(e) = self.vars.local_value(&a.name, None)
        {
            self.error(&e.to_string());
            return Err(Flow::Exit(1));
        }
        if flags.contains(&b'i') {
            self.vars.set_integer(&a.name);
        }
        // `declare -la a=(A)`, `-ua`: the case attribute first too.
        if let Some(case) = flags
            .iter()
            .rev()
            .find_map(|&c| crate::vars::Case::of_flag(c))
        {
            self.vars.set_case(&a.name, Some(case));
        }
        self.assign(a, local)
    }

    /// Expands a command's words. For declaration builtins (`declare`,
    /// `local`, `export`, `readonly`, `typeset`), arguments that look like
    /// assignments expand as assignments: no field splitting, no globbing,
    /// and `name=(…)` arrays are assigned here.
    fn expand_command_words(&mut self, words: &[Word]) -> Result<Vec<Vec<u8>>, Flow> {
        let decl = words
            .first()
            .and_then(Word::as_plain)
            .filter(|w| {
                matches!(
                    *w,
                    b"declare" | b"typeset" | b"local" | b"export" | b"readonly"
                )
            })
            .filter(|w| !self.functions.contains_key(*w));
        let Some(decl) = decl else {
            // `unset a[$k]`: an argument written as an element is one
            // already expanded; `unset` takes its subscript as it is
            // (bash 5.2). A quoted one (`unset 'a[$k]'`) it expands.
            // So do read, printf -v, wait -p and test -v with
            // `assoc_expand_once` (they take such a name as written).
            if let Some(first @ (b"unset" | b"read" | b"printf" | b"wait" | b"test" | b"[")) =
                words.first().and_then(Word::as_plain)
                && !self.functions.contains_key(first)
                && words[1..].iter().any(written_as_element)
            {
                let mut out = vec![first.to_vec()];
                let mut literal = Vec::new();
                for w in &words[1..] {
                    let fields = self.expand_words(std::slice::from_ref(w))?;
                    if fields.len() == 1 && written_as_element(w) {
                        literal.push(out.len());
                    }
                    out.extend(fields);
                }
                self.literal_args = literal.iter().map(|&i| out[i].clone()).collect();
                return Ok(out);
            }
            self.literal_args.clear();
            return self.expand_words(words);
        };
        let mut out = vec![decl.to_vec()];
        for w in &words[1..] {
            let flags: Vec<u8> = out[1..]
                .iter()
                .filter(|a| a.starts_with(b"-"))
                .flat_map(|a| a[1..].to_vec())
                .collect();
            let local = match decl {
                b"local" => true,
                b"declare" | b"typeset" => self.vars.in_function() && !flags.contains(&b'g'),
                _ => false,
            };
            if let [Part::ArrayAssign(a)] = w.parts.as_slice() {
                // `declare -A a=(…)` on an indexed `a` (or `-a` on an
                // associative one) is refused by `declare` itself, below:
                // nothing is assigned.
                let global = flags.contains(&b'g') && self.vars.in_function();
                let cur = if global {
                    let scopes = self.vars.take_scopes();
                    let v = self.vars.value(&a.name).cloned();
                    self.vars.restore_scopes(scopes);
                    v
                } else {
                    self.vars.value(&a.name).cloned()
                };
                // A new local that inherits (`localvar_inherit`, `-I`) is
                // converted as the variable it inherits would be.
                let inherits = local
                    && !self.vars.local_here(&a.name)
                    && (flags.contains(&b'I')
                        || crate::builtins::shopt_on(self, "localvar_inherit"));
                if (!local || inherits) && converts_array_kind(&flags, cur.as_ref()) {
                    let to = if flags.contains(&b'A') { b'A' } else { b'a' };
                    let msg = cannot_convert(to, &a.name);
                    // At the top level an assignment error abandons the
                    // line; in a function bash names the function and
                    // `declare` goes on to refuse it too.
                    if self.func_depth == 0 {
                        return Err(self.abandon(&msg, 1));
                    }
                    self.fn_prefixed_error(&msg);
                    out.push(a.name.clone());
                    continue;
                }
                // A local over a read-only name: bash names the function,
                // and `local` goes on to refuse it too.
                if local && self.func_depth > 0 && self.vars.local_refused(&a.name) {
                    let msg = format!("{}: readonly variable", String::from_utf8_lossy(&a.name));
                    self.fn_prefixed_error(&msg);
                    out.push(a.name.clone());
                    continue;
                }
                // `declare -g a=(…)` in a function: the global one.
                let scopes = (flags.contains(&b'g') && decl != b"local" && self.vars.in_function())
                    .then(|| self.vars.take_scopes());
                // `declare +i a=(…)`: the attribute goes before the values.
                let off: Vec<u8> = out[1..]
                    .iter()
                    .filter(|a| a.starts_with(b"+"))
                    .flat_map(|a| a[1..].to_vec())
                    .collect();
                if off.contains(&b'i') {
                    self.vars.clear_integer(&a.name);
                }
                if off.iter().any(|&c| crate::vars::Case::of_flag(c).is_some()) {
                    self.vars.set_case(&a.name, None);
                }
                let r = self.declare_array(a, &flags, local);
                if let Some(s) = scopes {
                    self.vars.restore_scopes(s);
                }
                r?;
                out.push(a.name.clone());
                continue;
            }
            match crate::parse::split_assignment(w) {
                Some(a) if a.index.is_none() => {
                    // `typeset -i x+=5`: the attribute comes first; with
                    // -a or -A, `declare` evaluates each element itself
                    // (`declare -ai a='(1 2)'`).
                    let array = flags.iter().any(|&c| matches!(c, b'a' | b'A'));
                    let v = self.assign_value_as(&a, flags.contains(&b'i') && !array, false)?;
                    let mut arg = a.name;
                    arg.push(b'=');
                    arg.extend_from_slice(&v);
                    out.push(arg);
                }
                // `declare m[k]=v`: an assignment word too, passed on as
                // `m[k]=v` with its subscript and value expanded.
                Some(a) => {
                    let idx = a
                        .index
                        .as_ref()
                        .map(|i| self.expand_string(i))
                        .transpose()?;
                    let mut arg = a.name.clone();
                    arg.push(b'[');
                    arg.extend_from_slice(&idx.unwrap_or_default());
                    arg.extend_from_slice(b"]=");
                    arg.extend_from_slice(&self.expand_assignment(&a.value)?);
                    out.push(arg);
                }
                _ => out.extend(self.expand_words(std::slice::from_ref(w))?),
            }
        }
        Ok(out)
    }

    fn assign_value(&mut self, a: &Assign) -> Result<Vec<u8>, Flow> {
        self.assign_value_as(a, false, false)
    }

    /// [`Shell::assign_value`]; `integer` as if the variable had the
    /// attribute (`typeset -i x+=5` adds).
    fn assign_value_as(&mut self, a: &Assign, integer: bool, trace: bool) -> Result<Vec<u8>, Flow> {
        let v = self.expand_assignment(&a.value)?;
        if trace {
            self.trace_assign(a, a.append, Some(&v));
        }
        let old = a.append.then(|| {
            self.vars
                .get(&a.name)
                .map(<[u8]>::to_vec)
                .unwrap_or_default()
        });
        let integer = integer || self.vars.is_integer(&a.name);
        self.assigned(old, v, integer)
    }

    /// Sets assignments for the length of one builtin; returns what to put
    /// back. A read-only name is reported when `report` (the first pass
    /// over a command's prefix; bash reports it once).
    fn push_temp_vars(
        &mut self,
        assigns: &[(Vec<u8>, Vec<u8>)],
        report: bool,
    ) -> Vec<(Vec<u8>, Option<Vec<u8>>)> {
        let mut old = Vec::with_capacity(assigns.len());
        for (k, v) in assigns {
            old.push((k.clone(), self.vars.get(k).map(<[u8]>::to_vec)));
            if let Err(e) = self.vars.set(k, v.clone())
                && report
            {
                self.error(&e.to_string());
            }
        }
        old
    }

    /// The arguments extdebug kept, innermost frame first, the shell's
    /// own last (`BASH_ARGV`, `BASH_ARGC`).
    fn frame_args(&self) -> impl Iterator<Item = &Vec<Vec<u8>>> {
        self.frames
            .iter()
            .rev()
            .filter_map(|f| f.args.as_ref())
            .chain(&self.main_args)
    }

    /// Whether `name` is bound by the running function's call (`v=t f`).
    pub fn is_prefix_bound(&self, name: &[u8]) -> bool {
        self.func_depth > 0
            && self
                .prefix_bound
                .iter()
                .any(|(d, n)| *d == self.func_depth && n == name)
    }

    /// An assignment error met while a declaration's words expand: bash
    /// names the function first when it is the function's first command.
    fn fn_prefixed_error(&mut self, msg: &str) {
        match self.frames.last().filter(|_| self.fresh_call) {
            Some(f) => {
                let text = format!("{}: {msg}", String::from_utf8_lossy(&f.name));
                self.error(&text);
            }
            None => self.error(msg),
        }
    }

    /// A builtin's prefix assignments are exported while it runs, as
    /// bash's temporary environment is (`V=1 declare -p V` shows `-x`);
    /// returns the names that were not exported before.
    fn export_temps(&mut self, assigns: &[(Vec<u8>, Vec<u8>)]) -> Vec<Vec<u8>> {
        let mut turned = Vec::new();
        for (k, _) in assigns {
            if self.vars.var(k).is_some_and(|v| !v.exported) && self.vars.export(k, None).is_ok() {
                turned.push(k.clone());
            }
        }
        turned
    }

    /// Takes the export back from those of `names` whose prefix value is
    /// still to be undone (those the builtin did not keep).
    fn unexport_temps(&mut self, names: Vec<Vec<u8>>, undo: &[(Vec<u8>, Option<Vec<u8>>)]) {
        for n in names {
            if undo.iter().any(|(k, _)| *k == n) {
                self.vars.unexport(&n);
            }
        }
    }

    /// `V=1 export V`, `V=1 readonly V`, `V=1 declare -r V` (or `-x`) at
    /// the top level: the prefix variable stays, exported, with what the
    /// builtin gave it (bash promotes it from the temporary environment).
    fn keep_promoted(&mut self, argv: &[Vec<u8>], undo: &mut Vec<(Vec<u8>, Option<Vec<u8>>)>) {
        if undo.is_empty() || self.vars.in_function() {
            return;
        }
        let promotes = match argv[0].as_slice() {
            b"export" | b"readonly" => true,
            b"declare" | b"typeset" => argv[1..].iter().any(|a| {
                a.len() > 1 && a[0] == b'-' && a[1..].iter().any(|c| matches!(c, b'r' | b'x'))
            }),
            _ => false,
        };
        if !promotes {
            return;
        }
        for a in &argv[1..] {
            if a.starts_with(b"-") || a.starts_with(b"+") {
                continue;
            }
            let name = a.split(|&c| c == b'=').next().unwrap_or_default();
            if let Some(i) = undo.iter().position(|(k, _)| k == name) {
                undo.remove(i);
                let _ = self.vars.export(name, None);
            }
        }
    }

    /// `z=y local z`: the new local starts with the prefix value (bash),
    /// and the prefix assignment is undone in the caller's scope, not on
    /// the local.
    fn settle_temp_locals(
        &mut self,
        assigns: &[(Vec<u8>, Vec<u8>)],
        fresh: &[bool],
        undo: &mut Vec<(Vec<u8>, Option<Vec<u8>>)>,
    ) {
        for ((k, v), &was_fresh) in assigns.iter().zip(fresh) {
            if !was_fresh || !self.vars.local_here(k) {
                continue;
            }
            if self.vars.local_unset_here(k) {
                let _ = self.vars.local(k, Some(v.clone()));
            }
            if let Some(i) = undo.iter().position(|(n, _)| n == k) {
                let (_, prev) = undo.remove(i);
                // The call's own binding of the name is simply replaced.
                if self.prefix_bound.contains(&(self.func_depth, k.clone())) {
                    continue;
                }
                match prev {
                    Some(p) => {
                        let _ = self.vars.set_in_caller(k, p);
                    }
                    None => self.vars.unset_in_caller(k),
                }
            }
        }
    }

    #[inline]
    fn pop_temp_vars(&mut self, old: Vec<(Vec<u8>, Option<Vec<u8>>)>) {
        if old.is_empty() {
            return;
        }
        self.pop_temp_vars_now(old);
    }

    fn pop_temp_vars_now(&mut self, old: Vec<(Vec<u8>, Option<Vec<u8>>)>) {
        for (k, v) in old.into_iter().rev() {
            let _ = match v {
                Some(v) => self.vars.set(&k, v),
                None => self.vars.unset(&k),
            };
        }
    }

    pub fn call_function(
        &mut self,
        f: &Rc<Function>,
        argv: &[Vec<u8>],
        assigns: &[(Vec<u8>, Vec<u8>)],
        redirects: &[Redirect],
    ) -> Exec {
        const MAX_FUNC_DEPTH: u32 = 1000;
        // FUNCNEST (bash): a positive limit on the nesting, past which the
        // command being run is abandoned with status 1.
        if let Some(limit) = self
            .vars
            .get(b"FUNCNEST")
            .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse::<u32>().ok())
            .filter(|&n| n > 0)
            && self.func_depth >= limit
        {
            self.error(&format!(
                "{}: maximum function nesting level exceeded ({limit})",
                String::from_utf8_lossy(&f.name)
            ));
            return Err(Flow::Abort(1));
        }
        if self.func_depth >= MAX_FUNC_DEPTH {
            self.error(&format!(
                "{}: maximum function nesting level exceeded ({MAX_FUNC_DEPTH})",
                String::from_utf8_lossy(&f.name)
            ));
            return Err(Flow::Exit(1));
        }
        let saved = match self.redirect(redirects) {
            Ok(s) => s,
            Err(s) => return self.redirect_flow.take().map_or(Ok(s), Err),
        };
        let saved_f = if f.redirects.is_empty() {
            None
        } else {
            match self.redirect(&f.redirects) {
                Ok(s) => Some(s),
                Err(s) => {
                    self.restore(saved);
                    return Ok(s);
                }
            }
        };
        // `f() { …; } <file`: a background command in f reads the file.
        let stdin = u32::from(reads_stdin(&f.redirects));
        self.stdin_redirected += stdin;
        let old_pos = std::mem::replace(&mut self.positional, argv[1..].to_vec());
        // A function's lines are its own, wherever it is called from.
        let line_shift = std::mem::take(&mut self.line_shift);
        let getopts_state = self.getopts_state;
        self.vars.push_scope();
        for (k, v) in assigns {
            let _ = self.vars.local(k, Some(v.clone()));
            let _ = self.vars.export(k, None);
            self.prefix_bound.push((self.func_depth + 1, k.clone()));
        }
        // A function inherits the ERR trap only with `set -E`, and the
        // DEBUG and RETURN traps only with `set -T`; the ones it does not
        // inherit are back when it returns, unless it set its own.
        let traced = !self.traced.is_empty() && self.traced.contains(&f.name);
        let hidden = self.hide_traps(traced);
        self.func_depth += 1;
        let file = self
            .function_files
            .get(&f.name)
            .cloned()
            .unwrap_or_else(|| self.current_file());
        let call_line = self.line;
        let args = self.extdebug.then(|| argv[1..].to_vec());
        self.frames.push(Frame {
            name: f.name.clone(),
            file,
            call_line,
            saved_opts: None,
            args,
        });
        // Traced (`set -T`, `declare -ft`): a DEBUG trap as the function
        // starts, on the line its body starts (bash).
        if !self.traps.is_empty() && (traced || self.functrace()) {
            self.at_line(f.body_line);
            self.run_debug_trap(|| f.name.clone())?;
        }
        self.fresh_call = true;
        let r = self.run_compound(&f.body);
        self.fresh_call = false;
        // Having run to its end, the function is at its definition's line
        // for the RETURN trap (after `return`, at the return's) (bash).
        if r.is_ok() && !self.traps.is_empty() {
            self.line = f.line;
        }
        let r = self.run_return_trap(r);
        if let Some(opts) = self.frames.pop().and_then(|f| f.saved_opts) {
            for (name, _) in OPTION_NAMES {
                let on = opts.get(name).unwrap_or(false);
                if self.opts.get(name) != Some(on) {
                    crate::builtins::set_option(self, name, on);
                }
            }
        }
        let mut propagated = Vec::new();
        if !assigns.is_empty() {
            let depth = self.func_depth;
            self.prefix_bound.retain(|(d, _)| *d < depth);
            if !self.propagate.is_empty() {
                for (_, n) in self.propagate.extract_if(.., |(d, _)| *d >= depth) {
                    if let Some(v) = self.vars.var(&n) {
                        propagated.push((n, v.clone()));
                    }
                }
            }
        }
        self.func_depth -= 1;
        self.line_shift = line_shift;
        // Back at the call: LINENO (and an ERR trap for a failed call) is
        // the call's line again.
        self.line = call_line;
        self.unhide_traps(hidden);
        // A function with its own OPTIND has its own place in the
        // arguments too: the caller's getopts goes on where it was (bash).
        if self.vars.local_here(b"OPTIND") {
            self.getopts_state = getopts_state;
        }
        self.vars.pop_scope();
        for (n, v) in propagated {
            if let Some(value) = v.value {
                let _ = self.vars.set_value(&n, value);
            }
            let _ = self.vars.export(&n, None);
            if v.readonly {
                let _ = self.vars.readonly(&n, None);
            }
        }
        self.positional = old_pos;
        self.stdin_redirected -= stdin;
        if let Some(s) = saved_f {
            self.restore(s);
        }
        self.restore(saved);
        match r {
            Err(Flow::Return(s)) => Ok(s),
            other => other,
        }
    }

    /// Whether functions, command substitutions and subshells inherit the
    /// DEBUG and RETURN traps: `set -T` (which `shopt -s extdebug` sets).
    fn functrace(&self) -> bool {
        self.opts.functrace
    }

    /// Takes away the traps a function does not inherit (see
    /// [`Shell::call_function`]).
    fn hide_traps(&mut self, traced: bool) -> Vec<(i32, Vec<u8>)> {
        if self.traps.is_empty() {
            return Vec::new();
        }
        let mut hidden = Vec::new();
        let mut take = |sh: &mut Self, sig| {
            if let Some(a) = sh.traps.remove(&sig) {
                hidden.push((sig, a));
            }
        };
        if !self.opts.errtrace {
            take(self, sys::ERR_TRAP);
        }
        if !self.functrace() && !traced {
            take(self, sys::DEBUG_TRAP);
            take(self, sys::RETURN_TRAP);
        }
        hidden
    }

    fn unhide_traps(&mut self, hidden: Vec<(i32, Vec<u8>)>) {
        for (sig, action) in hidden {
            self.traps.entry(sig).or_insert(action);
        }
    }

    /// Whether a trap's action is running.
    pub fn in_trap(&self) -> bool {
        !self.running_traps.is_empty()
    }

    /// Runs the RETURN trap, if set, as a function or sourced file ends with
    /// `r`; `$?` in it is the status being returned.
    pub fn run_return_trap(&mut self, r: Exec) -> Exec {
        if self.in_trap() || self.traps.is_empty() {
            return r;
        }
        let Some(action) = self.traps.get(&sys::RETURN_TRAP).cloned() else {
            return r;
        };
        if !matches!(r, Ok(_) | Err(Flow::Return(_))) {
            return r;
        }
        // `$?` in the trap is the last command's, not the returned status
        // (bash).
        self.run_trap_action(sys::RETURN_TRAP, &action)?;
        r
    }

    /// Runs the DEBUG trap, if set, before a command whose text `text`
    /// gives (`$BASH_COMMAND`). `$?` is kept for the command. With `shopt
    /// -s extdebug`, a trap that returns non-zero skips the command (the
    /// answer is true), and one that returns 2 in a function or a sourced
    /// file returns from it (bash).
    pub fn run_debug_trap(&mut self, text: impl FnOnce() -> Vec<u8>) -> Result<bool, Flow> {
        if self.traps.is_empty()
            || std::mem::take(&mut self.debug_done)
            || self.running_traps.contains(&sys::DEBUG_TRAP)
        {
            return Ok(false);
        }
        let Some(action) = self.traps.get(&sys::DEBUG_TRAP).cloned() else {
            return Ok(false);
        };
        self.bash_command = text();
        let status = self.run_trap_action(sys::DEBUG_TRAP, &action)?;
        if status == 0 || !crate::builtins::shopt_on(self, "extdebug") {
            return Ok(false);
        }
        if status == 2 && (self.func_depth > 0 || self.source_depth > 0) {
            return Err(Flow::Return(self.status));
        }
        Ok(true)
    }

    /// Runs a trap's action: `$?` in it is the status as it stands, and is
    /// that again afterwards; only an `exit` in it leaves. The answer is
    /// the action's own status.
    fn run_trap_action(&mut self, trap: i32, action: &[u8]) -> Result<i32, Flow> {
        let status = self.status;
        self.running_traps.push(trap);
        let r = self.eval_text(action);
        self.running_traps.pop();
        let own = self.status;
        self.status = status;
        match r {
            Err(Flow::Exit(s)) => Err(Flow::Exit(s)),
            Err(Flow::Return(s)) => Ok(s),
            _ => Ok(own),
        }
    }

    /// Finds a command in PATH, through the hash table (a hit for an
    /// entry there), without adding to it (`type`, `command -v`, `exec`).
    pub fn find_command(&mut self, name: &[u8]) -> Option<CString> {
        self.find_command_as(name, None, false)
    }

    /// Finds a command to run, in `path` (a `PATH=` prefix, `command -p`)
    /// or, if `None`, in `$PATH` through the hash table, which remembers
    /// it (with `set -h`, the default).
    pub fn find_command_in(&mut self, name: &[u8], path: Option<&[u8]>) -> Option<CString> {
        self.find_command_as(name, path, true)
    }

    /// Remembers `path` for `name`, with `hits` uses so far.
    pub fn hash_insert(&mut self, name: &[u8], path: CString, hits: u32) {
        self.hash_seq += 1;
        let seq = self.hash_seq;
        self.hash.insert(name.to_vec(), Hashed { path, hits, seq });
    }

    fn find_command_as(
        &mut self,
        name: &[u8],
        path: Option<&[u8]>,
        remember: bool,
    ) -> Option<CString> {
        if name.contains(&b'/') {
            return CString::new(name).ok();
        }
        if path.is_none()
            && let Some(h) = self.hash.get_mut(name)
        {
            h.hits += 1;
            return Some(h.path.clone());
        }
        let cache = remember && path.is_none() && self.opts.hashall;
        let path = match path {
            Some(p) => p.to_vec(),
            None => self
                .vars
                .get(b"PATH")
                .map(<[u8]>::to_vec)
                .unwrap_or_else(|| DEFAULT_PATH.to_vec()),
        };
        for dir in path.split(|&c| c == b':') {
            let mut full = if dir.is_empty() {
                b".".to_vec()
            } else {
                dir.to_vec()
            };
            full.push(b'/');
            full.extend_from_slice(name);
            let Ok(c) = CString::new(full) else { continue };
            if is_executable_file(&c) {
                if cache {
                    self.hash_insert(name, c.clone(), 1);
                }
                return Some(c);
            }
        }
        None
    }

    /// Runs an external command by name (for `command`); with
    /// `default_path`, found in the default PATH (`command -p`).
    pub fn run_external_argv(&mut self, argv: &[Vec<u8>], default_path: bool) -> Exec {
        if default_path {
            let p = vec![(b"PATH".to_vec(), DEFAULT_PATH.to_vec())];
            return self.run_external(argv, &p, &[], false);
        }
        self.run_external(argv, &[], &[], false)
    }

    fn run_external(
        &mut self,
        argv: &[Vec<u8>],
        assigns: &[(Vec<u8>, Vec<u8>)],
        redirects: &[Redirect],
        tail: bool,
    ) -> Exec {
        let name = &argv[0];
        if self.opts.restricted && name.contains(&b'/') {
            self.error(&format!(
                "{}: restricted: cannot specify `/' in command names",
                String::from_utf8_lossy(name)
            ));
            return Ok(1);
        }
        // `PATH=dir cmd` looks cmd up in that PATH.
        let prefix_path = assigns
            .iter()
            .rev()
            .find(|(k, _)| k == b"PATH")
            .map(|(_, v)| v.clone());
        let Some(path) = self.find_command_in(name, prefix_path.as_deref()) else {
            // Redirections are still performed (and may fail first), and
            // the message goes where they send stderr (`cmd 2>/dev/null`).
            let saved = match self.redirect(redirects) {
                Ok(saved) => saved,
                Err(s) => return Ok(s),
            };
            self.error(&format!(
                "{}: command not found",
                String::from_utf8_lossy(name)
            ));
            self.restore(saved);
            return Ok(127);
        };
        let cargv: Vec<CString> = argv
            .iter()
            .map(|a| CString::new(a.as_slice()).unwrap_or_default())
            .collect();
        // An exported SHELLOPTS goes to the child with the options as
        // they are now (it is computed, never stored).
        let with_opts;
        let assigns = if self.vars.var(b"SHELLOPTS").is_some_and(|v| v.exported) {
            with_opts = [
                assigns,
                &[(
                    b"SHELLOPTS".to_vec(),
                    crate::builtins::shellopts(self).into_bytes(),
                )],
            ]
            .concat();
            &with_opts
        } else {
            assigns
        };
        let env = self.vars.environment(assigns);
        let saved = match self.redirect(redirects) {
            Ok(s) => s,
            Err(s) => return Ok(s),
        };
        if tail && !self.in_trap() && self.traps.is_empty() {
            // Nothing follows: become the command (no fork).
            self.perf_report();
            let e = sys::exec(&path, &cargv, &env);
            self.restore(Saved::default());
            return Ok(self.exec_failed(name, &path, e, &cargv, &env));
        }
        let t0 = self.perf.as_ref().map(|_| std::time::Instant::now());
        let spawned = sys::spawn(&path, &cargv, &env, self.job_pgrp());
        if let (Some(p), Some(t0)) = (self.perf.as_mut(), t0) {
            p.record(crate::perf::Phase::Spawn, t0.elapsed());
        }
        let spawned = match spawned {
            Ok(pid) => Ok(pid),
            // Reported, or run as a script, with the redirections still
            // in place.
            Err(e) => Err(self.exec_failed(name, &path, e, &cargv, &env)),
        };
        self.restore(saved);
        match spawned {
            Ok(pid) => {
                self.job_joined(pid);
                let t1 = self.perf.as_ref().map(|_| std::time::Instant::now());
                let status = self.wait_child(pid);
                if let (Some(p), Some(t1)) = (self.perf.as_mut(), t1) {
                    p.record(crate::perf::Phase::Wait, t1.elapsed());
                }
                Ok(status)
            }
            Err(status) => Ok(status),
        }
    }

    /// After a failed exec or spawn: run the file as a script (ENOEXEC), or
    /// report and return 126/127.
    fn exec_failed(
        &mut self,
        name: &[u8],
        path: &CStr,
        e: nix::Error,
        argv: &[CString],
        env: &[CString],
    ) -> i32 {
        let shown = String::from_utf8_lossy(name);
        match e {
            nix::Error::ENOEXEC => {
                // A script without #!: run it with this shell.
                let self_exe = std::env::current_exe().ok();
                if let Some(exe) =
                    self_exe.and_then(|p| CString::new(p.as_os_str().as_bytes()).ok())
                {
                    let mut args = vec![CString::new("rush").unwrap_or_default()];
                    // bash's child resets the shell options, all but
                    // globskipdots (on by default).
                    if !crate::builtins::shopt_on(self, "globskipdots") {
                        args.push(CString::new("+O").unwrap_or_default());
                        args.push(CString::new("globskipdots").unwrap_or_default());
                    }
                    args.push(path.to_owned());
                    args.extend(argv[1..].iter().cloned());
                    match sys::spawn(&exe, &args, env, self.job_pgrp()) {
                        Ok(pid) => {
                            self.job_joined(pid);
                            return self.wait_child(pid);
                        }
                        Err(_) => return 126,
                    }
                }
                126
            }
            nix::Error::ENOENT => {
                self.error(&format!("{shown}: No such file or directory"));
                127
            }
            nix::Error::EACCES | nix::Error::EISDIR | nix::Error::EPERM => {
                let msg = if std::path::Path::new(std::ffi::OsStr::from_bytes(path.to_bytes()))
                    .is_dir()
                {
                    "Is a directory".to_string()
                } else {
                    io::Error::from(e)
                        .to_string()
                        .split(" (os error")
                        .next()
                        .unwrap_or("")
                        .to_string()
                };
                self.error(&format!("{shown}: {msg}"));
                126
            }
            e => {
                let msg = io::Error::from(e).to_string();
                self.error(&format!(
                    "{shown}: {}",
                    msg.split(" (os error").next().unwrap_or("")
                ));
                126
            }
        }
    }

    pub fn perf_report(&mut self) {
        if let Some(p) = self.perf.as_mut() {
            p.report();
        }
    }

    /// One assignment's `set -x` line: `name=value`, `name[sub]+=value`,
    /// or `name=(…)` as written; `append` writes `+=`.
    fn trace_assign(&mut self, a: &Assign, append: bool, value: Option<&[u8]>) {
        let mut line = self.ps4();
        line.extend_from_slice(&a.name);
        if let Some(idx) = &a.index {
            line.push(b'[');
            line.extend_from_slice(&crate::unparse::word(idx));
            line.push(b']');
        }
        line.extend_from_slice(if append { b"+=" } else { b"=" });
        match (value, &a.array) {
            // An empty value is shown as nothing (`x=`), as bash shows it.
            (Some(v), _) => {
                if !v.is_empty() {
                    line.extend_from_slice(&crate::builtins::quote_for_trace(v));
                }
            }
            (None, Some(items)) => {
                line.push(b'(');
                for (k, e) in items.iter().enumerate() {
                    if k > 0 {
                        line.push(b' ');
                    }
                    if let Some(key) = &e.key {
                        line.push(b'[');
                        line.extend_from_slice(&crate::unparse::word(key));
                        line.extend_from_slice(if e.append { b"]+=" } else { b"]=" });
                    }
                    line.extend_from_slice(&crate::unparse::word(&e.value));
                }
                line.push(b')');
            }
            (None, None) => {}
        }
        line.push(b'\n');
        self.trace_out(&line);
    }

    /// A simple command's `set -x` lines: one for each prefix assignment,
    /// then the words, as bash writes them.
    fn trace(&mut self, assigns: &[Assign], values: &[(Vec<u8>, Vec<u8>)], argv: &[Vec<u8>]) {
        // A prefix assignment shows the value it gives, `+=` done (bash).
        for (a, (_, v)) in assigns.iter().zip(values) {
            self.trace_assign(a, false, Some(v));
        }
        let mut line = self.ps4();
        let mut first = true;
        for a in argv {
            if !first {
                line.push(b' ');
            }
            first = false;
            line.extend_from_slice(&crate::builtins::quote_for_trace(a));
        }
        line.push(b'\n');
        self.trace_out(&line);
    }

    /// A `set -x` line: PS4 and `text`.
    pub fn trace_line(&mut self, text: &[u8]) {
        let mut line = self.ps4();
        line.extend_from_slice(text);
        line.push(b'\n');
        self.trace_out(&line);
    }

    /// `for NAME in WORDS` or `select …`, the words as written (bash).
    fn trace_head(&mut self, what: &[u8], var: &[u8], words: &[Word]) {
        let mut text = what.to_vec();
        text.push(b' ');
        text.extend_from_slice(var);
        text.extend_from_slice(b" in");
        for w in words {
            text.push(b' ');
            text.extend_from_slice(&crate::unparse::word(w));
        }
        self.trace_line(&text);
    }

    /// Arithmetic for a command (`((`, `for ((`, `[[`, `let`): an error
    /// names the command and is that command's failure (`None`), not the
    /// end of the line (bash).
    pub fn arith_command(&mut self, cmd: &'static str, text: &[u8]) -> Result<Option<i64>, Flow> {
        let outer = self.arith_cmd.replace(cmd);
        self.subscript_failed = false;
        let r = self.arith(text);
        self.arith_cmd = outer;
        match r {
            Ok(v) => Ok(Some(v)),
            // An error in a subscript abandons more than the command.
            Err(Flow::Abort(_)) if !std::mem::take(&mut self.subscript_failed) => Ok(None),
            Err(f) => Err(f),
        }
    }

    /// `(( expr ))` under `set -x`.
    fn trace_arith(&mut self, expr: &[u8]) {
        if !self.opts.xtrace {
            return;
        }
        let mut text = b"(( ".to_vec();
        text.extend_from_slice(expr);
        text.extend_from_slice(b" ))");
        self.trace_line(&text);
    }

    /// The prefix of a `set -x` line: PS4 expanded, its first character
    /// repeated once for each level of eval, source, trap or command
    /// substitution; nothing if PS4 is unset or empty, as in bash.
    fn ps4(&mut self) -> Vec<u8> {
        let Some(ps4) = self.vars.get(b"PS4").map(<[u8]>::to_vec) else {
            return Vec::new();
        };
        let saved = self.opts.xtrace;
        self.opts.xtrace = false;
        let mut out = self.expand_as_double_quoted(&ps4).unwrap_or(ps4);
        self.opts.xtrace = saved;
        if self.xtrace_level > 0 && !out.is_empty() {
            // The first character, whole if it is UTF-8.
            let first = match out[0] {
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                0xf0..=0xf7 => 4,
                _ => 1,
            }
            .min(out.len());
            let c = out[..first].to_vec();
            for _ in 0..self.xtrace_level {
                out.splice(0..0, c.iter().copied());
            }
        }
        out
    }

    /// The current directory: `$PWD`, or the kernel's if it is unset.
    pub fn logical_pwd(&self) -> Vec<u8> {
        self.vars
            .get(b"PWD")
            .map(<[u8]>::to_vec)
            .or_else(|| {
                std::env::current_dir()
                    .ok()
                    .map(|p| p.as_os_str().as_bytes().to_vec())
            })
            .unwrap_or_default()
    }

    /// Expands `text` as the inside of double quotes (PS1, PS2, PS4):
    /// parameters, command substitutions and arithmetic, no splitting or
    /// globbing. `None` if it does not parse or the expansion fails.
    pub fn expand_as_double_quoted(&mut self, text: &[u8]) -> Option<Vec<u8>> {
        let mut src = crate::parse::Text;
        let mut quoted = Vec::with_capacity(text.len() + 2);
        quoted.push(b'"');
        for &c in text {
            if c == b'"' {
                quoted.push(b'\\');
            }
            quoted.push(c);
        }
        quoted.push(b'"');
        let mut p = Parser::new(&quoted, &mut src, self.no_aliases.clone());
        match p.read_word() {
            Ok(Some(w)) => self.expand_string(&w).ok(),
            _ => None,
        }
    }

    // ---- redirections --------------------------------------------------

    /// Applies redirections, saving what they replace. On failure, reports
    /// it, undoes what was done, and returns the status (1).
    #[inline]
    pub fn redirect(&mut self, redirects: &[Redirect]) -> Result<Saved, i32> {
        if redirects.is_empty() {
            return Ok(Saved::default());
        }
        self.redirect_all(redirects)
    }

    fn redirect_all(&mut self, redirects: &[Redirect]) -> Result<Saved, i32> {
        self.redirect_flow = None;
        let mut saved = Saved::default();
        for r in redirects {
            if let Err(msg) = self.redirect_one(r, &mut saved) {
                if let Some(msg) = msg {
                    self.error(&msg);
                }
                self.restore(saved);
                return Err(1);
            }
        }
        Ok(saved)
    }

    fn save(&mut self, fd: RawFd, saved: &mut Saved) {
        if saved.fds.iter().any(|(f, _)| *f == fd) {
            return;
        }
        let copy = sys::save_fd(fd).ok().flatten();
        saved.fds.push((fd, copy));
    }

    /// Keeps redirections in effect for good (`exec >file`).
    fn forget(&mut self, saved: Saved) {
        for (_, copy) in saved.fds {
            if let Some(c) = copy {
                sys::close(c);
            }
        }
    }

    /// Undoes redirections, newest first.
    #[inline]
    pub fn restore(&mut self, saved: Saved) {
        if saved.fds.is_empty() {
            return;
        }
        self.restore_fds(saved);
    }

    fn restore_fds(&mut self, saved: Saved) {
        for (fd, copy) in saved.fds.into_iter().rev() {
            match copy {
                Some(c) => {
                    let _ = sys::dup2(c, fd);
                    sys::close(c);
                }
                None => sys::close(fd),
            }
        }
    }

    fn redirect_one(&mut self, r: &Redirect, saved: &mut Saved) -> Result<(), Option<String>> {
        if let Some(name) = &r.var {
            return self.redirect_to_var(r, name, saved);
        }
        let fd = r.fd.unwrap_or_else(|| r.op.default_fd());
        if !(0..sys::FIRST_PRIVATE_FD * 100).contains(&fd) {
            return Err(Some(format!("{fd}: Bad file descriptor")));
        }
        let target = match &r.target {
            // A here-string's word is one string, as an assignment's is:
            // no brace expansion, no splitting, no globbing.
            RedirTarget::Word(w) if r.op == RedirOp::HereString => {
                self.expand_string(w).map_err(|f| {
                    self.redirect_flow = Some(f);
                    None
                })?
            }
            RedirTarget::Word(w) => self.expand_redirect_target(w)?,
            RedirTarget::HereDoc(doc) => {
                let body = match doc.body.get() {
                    Some(w) => self.expand_heredoc(w).map_err(|_| None)?,
                    None => Vec::new(),
                };
                let file = here_fd(&body).map_err(|e| Some(format!("here-document: {e}")))?;
                self.save(fd, saved);
                let _ = sys::dup2(file.as_raw_fd(), fd);
                return Ok(());
            }
        };
        let shown = || String::from_utf8_lossy(&target).into_owned();
        // A restricted shell writes no files (bash).
        if self.opts.restricted
            && matches!(
                r.op,
                RedirOp::Out
                    | RedirOp::Clobber
                    | RedirOp::Append
                    | RedirOp::ReadWrite
                    | RedirOp::OutErr
                    | RedirOp::AppendOutErr
            )
        {
            return Err(Some(format!(
                "{}: restricted: cannot redirect output",
                shown()
            )));
        }
        let open = |flags: rustix::fs::OFlags| -> Result<OwnedFd, Option<String>> {
            let path = std::ffi::OsStr::from_bytes(&target);
            rustix::fs::open(
                path,
                flags | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::from(0o666),
            )
            .map_err(|e| Some(format!("{}: {}", shown(), errno_text(e))))
        };
        use rustix::fs::OFlags as O;
        // Saved first: if `fd` is closed now, the open below may land on it.
        self.save(fd, saved);
        let file = match r.op {
            RedirOp::In => open(O::RDONLY)?,
            RedirOp::Out | RedirOp::OutErr if self.opts.noclobber => {
                match open(O::WRONLY | O::CREATE | O::EXCL) {
                    Ok(f) => f,
                    Err(e) => {
                        // Existing non-regular files (like /dev/null) are fine.
                        let p = std::ffi::OsStr::from_bytes(&target);
                        match std::fs::metadata(p) {
                            Ok(m) if !m.is_file() => open(O::WRONLY)?,
                            Ok(_) => {
                                return Err(Some(format!(
                                    "{}: cannot overwrite existing file",
                                    shown()
                                )));
                            }
                            Err(_) => return Err(e),
                        }
                    }
                }
            }
            RedirOp::Out | RedirOp::Clobber | RedirOp::OutErr => {
                open(O::WRONLY | O::CREATE | O::TRUNC)?
            }
            RedirOp::Append | RedirOp::AppendOutErr => open(O::WRONLY | O::CREATE | O::APPEND)?,
            RedirOp::ReadWrite => open(O::RDWR | O::CREATE)?,
            RedirOp::HereString => {
                let mut body = target.clone();
                body.push(b'\n');
                here_fd(&body).map_err(|e| Some(format!("here-string: {e}")))?
            }
            RedirOp::DupIn | RedirOp::DupOut => {
                if target == b"-" {
                    self.save(fd, saved);
                    sys::close(fd);
                    self.coproc_end_closed(fd);
                    return Ok(());
                }
                let (num, close_src) = match target.strip_suffix(b"-") {
                    Some(n) => (n, true),
                    None => (target.as_slice(), false),
                };
                let Some(src) = std::str::from_utf8(num)
                    .ok()
                    .and_then(|s| s.parse::<RawFd>().ok())
                else {
                    if r.op == RedirOp::DupOut && r.fd.is_none() {
                        // `>& file` (bash): stdout and stderr to a file.
                        if self.opts.restricted {
                            return Err(Some(format!(
                                "{}: restricted: cannot redirect output",
                                shown()
                            )));
                        }
                        let f = open(O::WRONLY | O::CREATE | O::TRUNC)?;
                        self.save(1, saved);
                        self.save(2, saved);
                        let _ = sys::dup2(f.as_raw_fd(), 1);
                        let _ = sys::dup2(f.as_raw_fd(), 2);
                        return Ok(());
                    }
                    let written = match &r.target {
                        RedirTarget::Word(w) => crate::unparse::word(w),
                        RedirTarget::HereDoc(_) => target.clone(),
                    };
                    return Err(Some(format!(
                        "{}: ambiguous redirect",
                        String::from_utf8_lossy(&written)
                    )));
                };
                if src == fd {
                    return Ok(());
                }
                if !sys::is_open(src) || src >= sys::FIRST_PRIVATE_FD && saved_copy(saved, src) {
                    // bash names the word as written (`$fd: Bad file
                    // descriptor`).
                    let written = match &r.target {
                        RedirTarget::Word(w) => {
                            String::from_utf8_lossy(&crate::unparse::word(w)).into_owned()
                        }
                        RedirTarget::HereDoc(_) => src.to_string(),
                    };
                    return Err(Some(format!("{written}: Bad file descriptor")));
                }
                self.save(fd, saved);
                if let Err(e) = sys::dup2(src, fd) {
                    return Err(Some(format!("{src}: {e}")));
                }
                if close_src {
                    self.save(src, saved);
                    sys::close(src);
                    self.coproc_end_closed(src);
                }
                return Ok(());
            }
            RedirOp::HereDoc => unreachable!("handled above"),
        };
        if matches!(r.op, RedirOp::OutErr | RedirOp::AppendOutErr) {
            self.save(2, saved);
            let _ = sys::dup2(file.as_raw_fd(), 2);
        }
        if file.as_raw_fd() == fd {
            // Opened right where it belongs: keep it, inheritable.
            let raw = std::os::fd::IntoRawFd::into_raw_fd(file);
            let _ = sys::dup2(raw, raw);
        } else if let Err(e) = sys::dup2(file.as_raw_fd(), fd) {
            return Err(Some(format!("{fd}: {e}")));
        }
        Ok(())
    }

    /// `{name}>file` (bash): the redirection made on the lowest free fd
    /// from 10, which stays open after the command, its number assigned to
    /// `name`; `{name}>&-` closes the fd `name` holds.
    fn redirect_to_var(
        &mut self,
        r: &Redirect,
        name: &[u8],
        saved: &mut Saved,
    ) -> Result<(), Option<String>> {
        let shown = String::from_utf8_lossy(name).into_owned();
        let closing = matches!(r.op, RedirOp::DupIn | RedirOp::DupOut)
            && matches!(&r.target, RedirTarget::Word(w) if w.as_plain() == Some(b"-"));
        let plain = Redirect {
            fd: None,
            op: r.op,
            target: r.target.clone(),
            var: None,
        };
        if closing {
            let fd = self
                .vars
                .get(name)
                .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse::<RawFd>().ok())
                .ok_or_else(|| Some(format!("{shown}: ambiguous redirect")))?;
            sys::close(fd);
            return Ok(());
        }
        let mut fd = sys::FIRST_PRIVATE_FD;
        while sys::is_open(fd) || saved.fds.iter().any(|(_, c)| *c == Some(fd)) {
            fd += 1;
        }
        let mut here = Saved::default();
        let r = self.redirect_one(
            &Redirect {
                fd: Some(fd),
                ..plain
            },
            &mut here,
        );
        // The new fd outlives the command: nothing of it is restored.
        saved
            .fds
            .extend(here.fds.into_iter().filter(|(f, _)| *f != fd));
        r?;
        if let Err(e) = self.vars.set(name, fd.to_string().into_bytes()) {
            sys::close(fd);
            self.error(&e.to_string());
            return Err(Some(format!("{shown}: cannot assign fd to variable")));
        }
        Ok(())
    }

    fn expand_redirect_target(&mut self, w: &Word) -> Result<Vec<u8>, Option<String>> {
        // A non-interactive shell in POSIX mode does not glob the word.
        let noglob = self.opts.noglob;
        self.opts.noglob |= self.opts.posix && !self.opts.interactive;
        let fields = self.expand_words(std::slice::from_ref(w));
        self.opts.noglob = noglob;
        let fields = fields.map_err(|f| {
            self.redirect_flow = Some(f);
            None
        })?;
        match fields.as_slice() {
            [one] => Ok(one.clone()),
            // bash names the word as written (`$x: ambiguous redirect`).
            _ => Err(Some(format!(
                "{}: ambiguous redirect",
                String::from_utf8_lossy(&crate::unparse::word(w))
            ))),
        }
    }
}

/// Whether one of `redirects` replaces standard input.
fn reads_stdin(redirects: &[Redirect]) -> bool {
    redirects
        .iter()
        .any(|r| r.fd.unwrap_or_else(|| r.op.default_fd()) == 0)
}

/// User and system CPU seconds of the shell and its waited-for children.
/// `select`'s menu, laid out as bash lays it out: numbered items in as
/// many columns as fit in `columns`, filled down each column, padded with
/// tabs and spaces to the widest item.
fn select_menu(items: &[Vec<u8>], columns: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let width = |w: &[u8]| String::from_utf8_lossy(w).chars().count();
    let digits = |n: usize| n.to_string().len();
    let n = items.len();
    let index_len = digits(n);
    // The width of a column: the widest item, its number and ") ", and 2.
    let max = items.iter().map(|w| width(w)).max().unwrap_or(0) + index_len + 4;
    let cols = (columns / max).max(1);
    let mut rows = n.div_ceil(cols);
    // What fits on one line goes one item a line.
    if rows == 1 {
        rows = n;
    }
    let first_len = digits(rows);
    for row in 0..rows {
        let mut ind = row;
        let mut pos = 0;
        loop {
            let len = if pos == 0 { first_len } else { index_len };
            out.extend_from_slice(format!("{:>len$}) ", ind + 1).as_bytes());
            out.extend_from_slice(&items[ind]);
            let end = pos + width(&items[ind]) + len + 2;
            ind += rows;
            if ind >= n {
                break;
            }
            // Pad to the next column, with tabs as far as they go.
            let (mut from, to) = (end, pos + max);
            while from < to {
                if to / 8 > from / 8 {
                    out.push(b'\t');
                    from += 8 - from % 8;
                } else {
                    out.push(b' ');
                    from += 1;
                }
            }
            pos += max;
        }
        out.push(b'\n');
    }
    out
}

/// `time`'s report when TIMEFORMAT is unset.
const DEFAULT_TIMEFORMAT: &[u8] = b"\nreal\t%3lR\nuser\t%3lU\nsys\t%3lS";
/// `time -p`'s report (POSIX).
const POSIX_TIMEFORMAT: &[u8] = b"real %2R\nuser %2U\nsys %2S";

/// A `time` report in TIMEFORMAT's language (bash's): `%[p][l]R`, `U`
/// and `S` are the real, user and system times in seconds with `p` (0-3,
/// 3 if left out) digits after the point, truncated, `l` in the long form
/// `MmS.FFFs`; `%P` is (user + system) / real as a percentage with two
/// digits; `%%` is a `%`, and a `%` that ends the format stands for
/// itself. Times are in microseconds. Any other character after the `%`
/// is an error (the character, NUL for the format's end), and then, as in
/// bash, nothing is reported.
fn time_report(fmt: &[u8], real: u64, user: u64, sys: u64) -> Result<Vec<u8>, u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < fmt.len() {
        if fmt[i] != b'%' {
            out.push(fmt[i]);
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        let mut places = 3;
        if let Some(d) = fmt.get(i).filter(|c| c.is_ascii_digit()) {
            places = u32::from(d - b'0').min(3);
            i += 1;
        }
        let long = fmt.get(i) == Some(&b'l');
        if long {
            i += 1;
        }
        let value = match fmt.get(i) {
            Some(b'R') => Some(real),
            Some(b'U') => Some(user),
            Some(b'S') => Some(sys),
            _ => None,
        };
        match (value, fmt.get(i)) {
            (Some(us), _) => {
                let (whole, frac) = (us / 1_000_000, us % 1_000_000);
                let (mins, secs) = if long {
                    (whole / 60, whole % 60)
                } else {
                    (0, whole)
                };
                if long {
                    out.extend_from_slice(format!("{mins}m").as_bytes());
                }
                out.extend_from_slice(secs.to_string().as_bytes());
                if places > 0 {
                    let digits = frac / 10u64.pow(6 - places);
                    out.extend_from_slice(format!(".{digits:0w$}", w = places as usize).as_bytes());
                }
                if long {
                    out.push(b's');
                }
                i += 1;
            }
            (None, Some(b'P')) if start + 1 == i => {
                let pct = if real == 0 {
                    100.0
                } else {
                    (user + sys) as f64 * 100.0 / real as f64
                };
                out.extend_from_slice(format!("{pct:.2}").as_bytes());
                i += 1;
            }
            (None, Some(b'%')) if start + 1 == i => {
                out.push(b'%');
                i += 1;
            }
            (None, None) if start + 1 == i => out.push(b'%'),
            (None, c) => return Err(c.copied().unwrap_or(0)),
        }
    }
    Ok(out)
}

pub(crate) fn cpu_times() -> (f64, f64) {
    let usage = |who| {
        // SAFETY: getrusage fills the struct it is given.
        let u = unsafe {
            let mut u: libc::rusage = std::mem::zeroed();
            libc::getrusage(who, &mut u);
            u
        };
        let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
        (t(u.ru_utime), t(u.ru_stime))
    };
    let (a, b) = (usage(libc::RUSAGE_SELF), usage(libc::RUSAGE_CHILDREN));
    (a.0 + b.0, a.1 + b.1)
}

/// The search path when PATH is unset, and for `command -p`.
pub const DEFAULT_PATH: &[u8] = b"/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";

/// What a loop does after running part of itself.
enum Step {
    Done(i32),
    Break,
    Continue,
    /// Leave this loop too (an outer `break N`, `return`, `exit`).
    Leave(Flow),
}

fn step(r: Exec) -> Step {
    match r {
        Ok(s) => Step::Done(s),
        Err(Flow::Break(1)) => Step::Break,
        Err(Flow::Break(n)) => Step::Leave(Flow::Break(n - 1)),
        Err(Flow::Continue(1)) => Step::Continue,
        Err(Flow::Continue(n)) => Step::Leave(Flow::Continue(n - 1)),
        Err(f) => Step::Leave(f),
    }
}

fn saved_copy(saved: &Saved, fd: RawFd) -> bool {
    saved.fds.iter().any(|(_, c)| *c == Some(fd))
}

/// A readable fd holding `body`: a pipe when it fits in the pipe buffer,
/// otherwise an anonymous file.
fn here_fd(body: &[u8]) -> io::Result<OwnedFd> {
    const PIPE_CAPACITY: usize = 65536;
    if body.len() < PIPE_CAPACITY {
        let (r, w) = sys::pipe()?;
        sys::write_all(w.as_raw_fd(), body)?;
        drop(w);
        return sys::to_private(r);
    }
    let f = rustix::fs::memfd_create("rush-heredoc", rustix::fs::MemfdFlags::CLOEXEC)?;
    sys::write_all(f.as_raw_fd(), body)?;
    rustix::fs::seek(&f, rustix::fs::SeekFrom::Start(0))?;
    sys::to_private(f)
}

/// An errno as the shell words it ("No such file or directory").
pub fn errno_text(e: rustix::io::Errno) -> String {
    io_text(&io::Error::from(e))
}

/// An I/O error as the shell words it: the system's message without
/// Rust's " (os error N)".
pub fn io_text(e: &io::Error) -> String {
    let s = e.to_string();
    s.split(" (os error").next().unwrap_or_default().to_string()
}

pub(crate) fn is_executable_file(path: &CStr) -> bool {
    match rustix::fs::stat(path) {
        Ok(st) => {
            rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile
                && rustix::fs::access(path, rustix::fs::Access::EXEC_OK).is_ok()
        }
        Err(_) => false,
    }
}

/// A part whose expansion runs nothing (no command substitution).
fn is_pure_part(p: &Part) -> bool {
    match p {
        Part::CommandSub(..) => false,
        Part::Double(inner) => inner.iter().all(is_pure_part),
        Part::Arith(_) => false,
        Part::Param(p) => matches!(p.op, ParamOp::Plain | ParamOp::Length),
        _ => true,
    }
}

/// Whether `list` is one `! pipeline` and nothing else (not in the
/// background).
fn is_one_inverted_pipeline(list: &List) -> bool {
    match list.items.as_slice() {
        [item] => !item.background && item.and_or.rest.is_empty() && item.and_or.first.bang,
        _ => false,
    }
}

/// Whether `p` is one compound command the shell runs itself (`{ }`, `if`,
/// loops, `case`), whose status is that of a command inside it.
fn runs_in_shell(p: &Pipeline) -> bool {
    matches!(
        p.commands.as_slice(),
        [Command::Compound(c, _)] if matches!(
            **c,
            Compound::Brace(_)
                | Compound::If { .. }
                | Compound::Loop { .. }
                | Compound::For { .. }
                | Compound::Case { .. }
                | Compound::ArithFor { .. }
        )
    )
}

/// Whether `declare` flags ask to turn an indexed array into an
/// associative one or back, which bash refuses.
pub fn converts_array_kind(flags: &[u8], cur: Option<&Value>) -> bool {
    (flags.contains(&b'A') && matches!(cur, Some(Value::Indexed(_))))
        || (flags.contains(&b'a') && matches!(cur, Some(Value::Assoc(_))))
}

/// Whether builtin `name` can see that its prefix assignments are
/// exported (bash's temporary environment): those that run commands or
/// print attributes. For the rest, exporting them would only cost a
/// rebuilt environment (`IFS= read` in a loop). Declarations that assign
/// decide about exporting themselves.
fn observes_temp_env(name: &[u8], argv: &[Vec<u8>]) -> bool {
    match name {
        b"eval" | b"." | b"source" | b"command" | b"builtin" | b"fc" | b"mapfile"
        | b"readarray" | b"compgen" => true,
        b"declare" | b"typeset" => argv[1..]
            .iter()
            .any(|a| a.starts_with(b"-") && a.contains(&b'p')),
        _ => false,
    }
}

/// `name[sub]` split into the name and the subscript text.
pub(crate) fn split_element(t: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    split_element_as(t, false)
}

/// [`split_element`]; `as_written` (`assoc_expand_once`): the subscript
/// runs from the first `[` to the last `]`, whatever is between.
pub(crate) fn split_element_as(t: &[u8], as_written: bool) -> Option<(Vec<u8>, Vec<u8>)> {
    let open = t.iter().position(|&c| c == b'[')?;
    let end = if as_written {
        (t.len() > open + 2 && t.ends_with(b"]")).then_some(t.len() - 1)?
    } else {
        subscript_end(t, open)?
    };
    if !crate::parse::is_name(&t[..open]) || end + 1 != t.len() {
        return None;
    }
    Some((t[..open].to_vec(), t[open + 1..t.len() - 1].to_vec()))
}

/// Where the `]` that closes the `[` at `open` is (brackets nest, a
/// backslash quotes), as bash finds it: `A[]]` is `A[]` and a `]` after,
/// so not one element.
pub(crate) fn subscript_end(t: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0u32;
    let mut i = open;
    while i < t.len() {
        match t[i] {
            b'\\' => i += 1,
            // Quotes hide brackets, and must close (`a[80's]` is no name).
            q @ (b'\'' | b'"') => {
                i += 1 + t.get(i + 1..)?.iter().position(|&c| c == q)?;
            }
            b'[' => depth += 1,
            b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// A name a builtin may assign (`read`, `printf -v`): `name` or
/// `name[subscript]`.
pub fn is_ref(sh: &Shell, target: &[u8]) -> bool {
    crate::parse::is_name(target) || split_element_as(target, sh.name_as_written(target)).is_some()
}

impl Shell {
    /// `assoc_expand_once`: a subscript that comes as text is taken as
    /// written, from the first `[` to the last `]`, and not expanded.
    pub fn keys_as_written(&self) -> bool {
        crate::builtins::shopt_on(self, "assoc_expand_once")
    }

    /// A builtin's argument naming an element, written unquoted as one
    /// (`read A[$k]`), with `assoc_expand_once`: taken as written.
    pub fn name_as_written(&self, target: &[u8]) -> bool {
        self.keys_as_written() && self.literal_args.iter().any(|a| a == target)
    }

    /// Sets `name` or one element (`name[sub]`) as a builtin's result, as
    /// `read` and `printf -v` do; an error is reported and gives `false`.
    pub fn set_ref(&mut self, target: &[u8], value: Vec<u8>) -> Result<bool, Flow> {
        let as_written = self.name_as_written(target);
        let r = match split_element_as(target, as_written) {
            Some((name, sub)) => {
                let assoc = matches!(self.vars.value(&name), Some(Value::Assoc(_)));
                // Every element is no place to put one value.
                if !assoc && matches!(sub.as_slice(), b"@" | b"*") {
                    let msg = format!("{}: bad array subscript", String::from_utf8_lossy(target));
                    self.error(&msg);
                    return Ok(false);
                }
                let sub = if as_written && assoc {
                    sub
                } else {
                    self.runtime_subscript(&name, &sub)?
                };
                let key = self.array_key(&name, &sub)?;
                if key.before_start() {
                    let msg = format!("{}: bad array subscript", String::from_utf8_lossy(target));
                    self.error(&msg);
                    return Ok(false);
                }
                self.vars.set_elem(&name, key, value)
            }
            None => self.vars.set(target, value),
        };
        if let Err(e) = r {
            self.error(&e.to_string());
            return Ok(false);
        }
        Ok(true)
    }
}

/// The one function definition named `name` that `list` is, if it is
/// exactly that (an imported function's text may hold nothing else).
fn one_function(list: List, name: &[u8]) -> Option<Rc<Function>> {
    let [item] = <[_; 1]>::try_from(list.items).ok()?;
    if item.background || !item.and_or.rest.is_empty() {
        return None;
    }
    let p = item.and_or.first;
    if p.bang || p.timed || p.commands.len() != 1 {
        return None;
    }
    match p.commands.into_iter().next()? {
        Command::Function(f) if f.name == name => Some(f),
        _ => None,
    }
}

/// How many lines bash counts past the end of an eval'd text that ends
/// inside a construct: it reads the text with a newline added (one line
/// on), and a backslash before that newline continues the line (one more);
/// a text that ends with its own newline adds none, unless that newline
/// is a continuation.
fn eof_lines(text: &[u8]) -> u32 {
    let (body, newline) = match text.strip_suffix(b"\n") {
        Some(b) => (b, true),
        None => (text, false),
    };
    let backslashes = body.iter().rev().take_while(|&&c| c == b'\\').count();
    match (newline, backslashes % 2 == 1) {
        (true, false) => 0,
        (true, true) | (false, false) => 1,
        (false, true) => 2,
    }
}

/// A command's path in the hash table (`hash`).
#[derive(Debug, Clone)]
pub struct Hashed {
    pub path: CString,
    /// Times it was looked up since it was remembered (bash's hits).
    pub hits: u32,
    /// When it was remembered, for bash's order.
    pub seq: u64,
}

/// The buckets of bash's command hash table.
const HASH_BUCKETS: u32 = 256;

/// The order bash lists its hash table in: by bucket (FNV-1 of the name,
/// C's signed chars), newest first within one.
pub fn hash_order(name: &[u8], seq: u64) -> (u32, std::cmp::Reverse<u64>) {
    (
        crate::assoc::hash(name) & (HASH_BUCKETS - 1),
        std::cmp::Reverse(seq),
    )
}

/// The line of the first command of `list`, if it records one.
fn first_line(list: &List) -> Option<u32> {
    match list.items.first()?.and_or.first.commands.first()? {
        Command::Simple(s) => Some(s.line),
        Command::Compound(c, _) => match &**c {
            Compound::For { line, .. }
            | Compound::Case { line, .. }
            | Compound::Arith { line, .. }
            | Compound::ArithFor { line, .. }
            | Compound::DoubleBracket { line, .. } => Some(*line),
            _ => None,
        },
        Command::Function(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::time_report;

    #[test]
    fn time_reports_minutes_percentages_and_truncates() {
        // 75.4567 s real, 1.5 s user, 0.25 s system.
        let r = |f: &str| time_report(f.as_bytes(), 75_456_789, 1_500_000, 250_000);
        assert_eq!(r("%lR %1lR %0lR").unwrap(), b"1m15.456s 1m15.4s 1m15s");
        assert_eq!(r("%R %U %2S").unwrap(), b"75.456 1.500 0.25");
        assert_eq!(r("%P").unwrap(), b"2.32");
        assert_eq!(r("%9R").unwrap(), b"75.456");
        assert_eq!(r("%lP"), Err(b'P'));
        assert_eq!(r("%3"), Err(0));
        assert_eq!(time_report(b"%P", 0, 0, 0).unwrap(), b"100.00");
    }
}
