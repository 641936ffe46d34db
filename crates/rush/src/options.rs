//! The shell's options: `set -o` by name and letter ([`Options`], and
//! `$-`, `$SHELLOPTS`), and `shopt` ([`Shopts`], and `$BASHOPTS`). State
//! only: what turning one on does to the rest of the shell (the history,
//! `extdebug`'s traps) is the shell's (`Shell::set_option`).

use std::collections::BTreeSet;

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

impl Options {
    /// `$SHELLOPTS`: the `set -o` options that are on, colon-separated.
    pub fn shellopts(&self) -> String {
        let on: Vec<&str> = OPTION_NAMES
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| self.get(n) == Some(true))
            .collect();
        on.join(":")
    }
}

/// Every option bash 5.2's `shopt` knows, in bash's order (which `shopt`
/// lists keep), with bash's default for a non-interactive shell. Which of
/// them change what rush does is listed in the crate's README.
pub const SHOPTS: &[(&str, bool)] = &[
    ("autocd", false),
    ("assoc_expand_once", false),
    ("cdable_vars", false),
    ("cdspell", false),
    ("checkhash", false),
    ("checkjobs", false),
    ("checkwinsize", true),
    ("cmdhist", true),
    ("compat31", false),
    ("compat32", false),
    ("compat40", false),
    ("compat41", false),
    ("compat42", false),
    ("compat43", false),
    ("compat44", false),
    ("complete_fullquote", true),
    ("direxpand", false),
    ("dirspell", false),
    ("dotglob", false),
    ("execfail", false),
    ("expand_aliases", false),
    ("extdebug", false),
    ("extglob", false),
    ("extquote", true),
    ("failglob", false),
    ("force_fignore", true),
    ("globasciiranges", true),
    ("globskipdots", true),
    ("globstar", false),
    ("gnu_errfmt", false),
    ("histappend", false),
    ("histreedit", false),
    ("histverify", false),
    ("hostcomplete", true),
    ("huponexit", false),
    ("inherit_errexit", false),
    ("interactive_comments", true),
    ("lastpipe", false),
    ("lithist", false),
    ("localvar_inherit", false),
    ("localvar_unset", false),
    ("login_shell", false),
    ("mailwarn", false),
    ("no_empty_cmd_completion", false),
    ("nocaseglob", false),
    ("nocasematch", false),
    ("noexpand_translation", false),
    ("nullglob", false),
    ("patsub_replacement", true),
    ("progcomp", true),
    ("progcomp_alias", false),
    ("promptvars", true),
    ("restricted_shell", false),
    ("shift_verbose", false),
    ("sourcepath", true),
    ("varredir_close", false),
    ("xpg_echo", false),
];

/// `shopt`'s options that are on.
#[derive(Debug, Clone, Default)]
pub struct Shopts(BTreeSet<String>);

impl Shopts {
    /// bash's defaults for a non-interactive shell.
    pub fn new() -> Shopts {
        Shopts(
            SHOPTS
                .iter()
                .filter(|(_, on)| *on)
                .map(|(n, _)| (*n).to_string())
                .collect(),
        )
    }

    /// Whether option `name` is on.
    pub fn on(&self, name: &str) -> bool {
        self.0.contains(name)
    }

    /// Turns `name` on or off; false if `shopt` has no such option.
    pub fn set(&mut self, name: &str, on: bool) -> bool {
        if !SHOPTS.iter().any(|(k, _)| *k == name) {
            return false;
        }
        if on {
            self.0.insert(name.to_string());
        } else {
            self.0.remove(name);
        }
        true
    }

    /// `$BASHOPTS`: the options that are on, colon-separated, in bash's
    /// order.
    pub fn bashopts(&self) -> String {
        let on: Vec<&str> = names().filter(|n| self.on(n)).collect();
        on.join(":")
    }
}

/// Every `shopt` name, in bash's order.
pub fn names() -> impl Iterator<Item = &'static str> {
    SHOPTS.iter().map(|(n, _)| *n)
}
