//! The shell's state and the executor that walks the syntax tree.
//!
//! External commands are started with `sys::spawn` (vfork semantics) and waited for with a
//! blocking wait4. Output is never captured except by command substitution,
//! which reads a pipe (or, for safe builtins, a buffer, with no fork).

use crate::ast::*;
use crate::job::Job;
use crate::options::{Options, Shopts};
use crate::parse::{Aliases, Parser};
use crate::perf::Perf;
use crate::sys;
use crate::vars::Value;
use rustc_hash::FxHashMap as HashMap;
use std::io;
use std::os::fd::{OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::rc::Rc;

mod exec;
mod history;
mod jobs;
mod options;
mod redirect;
mod simple;
mod source;
mod trace;
mod traps;
mod vars;

pub(crate) use simple::is_executable_file;
pub use simple::{DEFAULT_PATH, Hashed, hash_order};
pub(crate) use vars::split_element;
pub use vars::{cannot_convert, converts_array_kind, is_ref};

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

/// The executor as the builtins, `[[ ]]` and the layers above reach it: the
/// one interface through which they run commands, functions and traps.
/// The executor's own methods of these names are private to `shell/`;
/// outside it, these are what a call finds (with `Run` imported).
pub trait Run {
    /// Parses and runs `text`, command by command (`eval`, `source`, `fc`,
    /// traps).
    fn eval_text(&mut self, text: &[u8]) -> Exec;
    /// Calls shell function `f` with `argv` (`$0` first), temporary
    /// assignments and redirections.
    fn call_function(
        &mut self,
        f: &Rc<Function>,
        argv: &[Vec<u8>],
        assigns: &[(Vec<u8>, Vec<u8>)],
        redirects: &[Redirect],
    ) -> Exec;
    /// Runs an external command by name (`command`); with `default_path`,
    /// found in the default PATH (`command -p`).
    fn run_external_argv(&mut self, argv: &[Vec<u8>], default_path: bool) -> Exec;
    /// Runs the trap actions of signals that arrived.
    fn run_traps(&mut self) -> Result<(), Flow>;
    /// Runs the RETURN trap as a function or a sourced file ends with `r`.
    fn run_return_trap(&mut self, r: Exec) -> Exec;
    /// Arithmetic for a command (`let`, `[[`): an error names the command
    /// and is its failure (`None`).
    fn arith_command(&mut self, cmd: &'static str, text: &[u8]) -> Result<Option<i64>, Flow>;
    /// Runs the EXIT trap (once) and returns the status to exit with.
    fn finish(&mut self, status: i32) -> i32;
    /// A coprocess was reaped (`wait`): its variables and ends go.
    fn coproc_done(&mut self, pid: i32);
}

/// Each method is the executor's own of the same name (inherent methods
/// come first where they are visible, as here).
impl Run for Shell {
    fn eval_text(&mut self, text: &[u8]) -> Exec {
        Shell::eval_text(self, text)
    }
    fn call_function(
        &mut self,
        f: &Rc<Function>,
        argv: &[Vec<u8>],
        assigns: &[(Vec<u8>, Vec<u8>)],
        redirects: &[Redirect],
    ) -> Exec {
        Shell::call_function(self, f, argv, assigns, redirects)
    }
    fn run_external_argv(&mut self, argv: &[Vec<u8>], default_path: bool) -> Exec {
        Shell::run_external_argv(self, argv, default_path)
    }
    #[inline]
    fn run_traps(&mut self) -> Result<(), Flow> {
        Shell::run_traps(self)
    }
    fn run_return_trap(&mut self, r: Exec) -> Exec {
        Shell::run_return_trap(self, r)
    }
    fn arith_command(&mut self, cmd: &'static str, text: &[u8]) -> Result<Option<i64>, Flow> {
        Shell::arith_command(self, cmd, text)
    }
    fn finish(&mut self, status: i32) -> i32 {
        Shell::finish(self, status)
    }
    fn coproc_done(&mut self, pid: i32) {
        Shell::coproc_done(self, pid);
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
    pub shopts: Shopts,
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
    pub completions: HashMap<Vec<u8>, crate::compspec::CompSpec>,
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
            shopts: Shopts::default(),
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
                self.set_option(&String::from_utf8_lossy(o), true);
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

    /// The aliases the parser expands: none unless `shopt -s
    /// expand_aliases` (on in interactive shells) or POSIX mode, as in
    /// bash, where a script's aliases are only text until it asks.
    pub fn parser_aliases(&self) -> Aliases {
        if self.opts.posix || self.shopts.on("expand_aliases") {
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

    /// The file the running code comes from: the innermost frame's, else
    /// the top level's.
    pub fn current_file(&self) -> Rc<[u8]> {
        self.frames
            .last()
            .map_or_else(|| self.top_file.clone(), |f| f.file.clone())
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

/// The buckets of bash's command hash table.
const HASH_BUCKETS: u32 = 256;

#[cfg(test)]
mod tests {
    use super::exec::time_report;

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
