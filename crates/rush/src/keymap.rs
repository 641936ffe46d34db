//! The line editor's key bindings and variables as readline names them:
//! what `bind` and an inputrc file change, and what `bind -p`, `-v`, `-q`
//! … report. This is shell state only; `interactive::keys` applies it to
//! the editor before each prompt.
//!
//! A key sequence is kept as the bytes a terminal sends (`"\e[A"` is
//! ESC `[` `A`); [`translate`] reads readline's notation into bytes and
//! [`untranslate`] writes it back.

/// Every function name readline and bash know, sorted (`bind -l`).
/// Binding one that rush's editor cannot perform is accepted and listed,
/// and the key does nothing (see `interactive::keys::command`).
pub const FUNCTIONS: &[&str] = &[
    "abort",
    "accept-line",
    "alias-expand-line",
    "arrow-key-prefix",
    "backward-byte",
    "backward-char",
    "backward-delete-char",
    "backward-kill-line",
    "backward-kill-word",
    "backward-word",
    "beginning-of-history",
    "beginning-of-line",
    "bracketed-paste-begin",
    "call-last-kbd-macro",
    "capitalize-word",
    "character-search",
    "character-search-backward",
    "clear-display",
    "clear-screen",
    "complete",
    "complete-command",
    "complete-filename",
    "complete-hostname",
    "complete-into-braces",
    "complete-username",
    "complete-variable",
    "copy-backward-word",
    "copy-forward-word",
    "copy-region-as-kill",
    "dabbrev-expand",
    "delete-char",
    "delete-char-or-list",
    "delete-horizontal-space",
    "digit-argument",
    "display-shell-version",
    "do-lowercase-version",
    "downcase-word",
    "dump-functions",
    "dump-macros",
    "dump-variables",
    "dynamic-complete-history",
    "edit-and-execute-command",
    "emacs-editing-mode",
    "end-kbd-macro",
    "end-of-history",
    "end-of-line",
    "exchange-point-and-mark",
    "fetch-history",
    "forward-backward-delete-char",
    "forward-byte",
    "forward-char",
    "forward-search-history",
    "forward-word",
    "glob-complete-word",
    "glob-expand-word",
    "glob-list-expansions",
    "history-and-alias-expand-line",
    "history-expand-line",
    "history-search-backward",
    "history-search-forward",
    "history-substring-search-backward",
    "history-substring-search-forward",
    "insert-comment",
    "insert-completions",
    "insert-last-argument",
    "kill-line",
    "kill-region",
    "kill-whole-line",
    "kill-word",
    "magic-space",
    "menu-complete",
    "menu-complete-backward",
    "next-history",
    "next-screen-line",
    "non-incremental-forward-search-history",
    "non-incremental-forward-search-history-again",
    "non-incremental-reverse-search-history",
    "non-incremental-reverse-search-history-again",
    "old-menu-complete",
    "operate-and-get-next",
    "overwrite-mode",
    "possible-command-completions",
    "possible-completions",
    "possible-filename-completions",
    "possible-hostname-completions",
    "possible-username-completions",
    "possible-variable-completions",
    "previous-history",
    "previous-screen-line",
    "print-last-kbd-macro",
    "quoted-insert",
    "re-read-init-file",
    "redraw-current-line",
    "reverse-search-history",
    "revert-line",
    "self-insert",
    "set-mark",
    "shell-backward-kill-word",
    "shell-backward-word",
    "shell-expand-line",
    "shell-forward-word",
    "shell-kill-word",
    "shell-transpose-words",
    "skip-csi-sequence",
    "spell-correct-word",
    "start-kbd-macro",
    "tab-insert",
    "tilde-expand",
    "transpose-chars",
    "transpose-words",
    "tty-status",
    "undo",
    "universal-argument",
    "unix-filename-rubout",
    "unix-line-discard",
    "unix-word-rubout",
    "upcase-word",
    "vi-append-eol",
    "vi-append-mode",
    "vi-arg-digit",
    "vi-bWord",
    "vi-back-to-indent",
    "vi-backward-bigword",
    "vi-backward-word",
    "vi-bword",
    "vi-change-case",
    "vi-change-char",
    "vi-change-to",
    "vi-char-search",
    "vi-column",
    "vi-complete",
    "vi-delete",
    "vi-delete-to",
    "vi-eWord",
    "vi-edit-and-execute-command",
    "vi-editing-mode",
    "vi-end-bigword",
    "vi-end-word",
    "vi-eof-maybe",
    "vi-eword",
    "vi-fWord",
    "vi-fetch-history",
    "vi-first-print",
    "vi-forward-bigword",
    "vi-forward-word",
    "vi-fword",
    "vi-goto-mark",
    "vi-insert-beg",
    "vi-insertion-mode",
    "vi-match",
    "vi-movement-mode",
    "vi-next-word",
    "vi-overstrike",
    "vi-overstrike-delete",
    "vi-prev-word",
    "vi-put",
    "vi-redo",
    "vi-replace",
    "vi-rubout",
    "vi-search",
    "vi-search-again",
    "vi-set-mark",
    "vi-subst",
    "vi-tilde-expand",
    "vi-undo",
    "vi-unix-word-rubout",
    "vi-yank-arg",
    "vi-yank-pop",
    "vi-yank-to",
    "yank",
    "yank-last-arg",
    "yank-nth-arg",
    "yank-pop",
];

/// The keys rush's editor binds in emacs mode, as readline names them
/// (printable characters self-insert besides).
const EMACS: &[(&str, &str)] = &[
    (r"\C-g", "abort"),
    (r"\C-x\C-g", "abort"),
    (r"\e\C-g", "abort"),
    (r"\C-j", "accept-line"),
    (r"\C-m", "accept-line"),
    (r"\C-b", "backward-char"),
    (r"\eOD", "backward-char"),
    (r"\e[D", "backward-char"),
    (r"\C-h", "backward-delete-char"),
    (r"\C-?", "backward-delete-char"),
    (r"\C-x\C-?", "backward-kill-line"),
    (r"\e\C-h", "backward-kill-word"),
    (r"\e\C-?", "backward-kill-word"),
    (r"\e\e[D", "backward-word"),
    (r"\e[1;3D", "backward-word"),
    (r"\e[1;5D", "backward-word"),
    (r"\eb", "backward-word"),
    (r"\e<", "beginning-of-history"),
    (r"\C-a", "beginning-of-line"),
    (r"\eOH", "beginning-of-line"),
    (r"\e[1~", "beginning-of-line"),
    (r"\e[H", "beginning-of-line"),
    (r"\e[200~", "bracketed-paste-begin"),
    (r"\ec", "capitalize-word"),
    (r"\C-]", "character-search"),
    (r"\e\C-]", "character-search-backward"),
    (r"\C-l", "clear-screen"),
    (r"\C-i", "complete"),
    (r"\C-d", "delete-char"),
    (r"\e[3~", "delete-char"),
    (r"\e-", "digit-argument"),
    (r"\e0", "digit-argument"),
    (r"\e1", "digit-argument"),
    (r"\e2", "digit-argument"),
    (r"\e3", "digit-argument"),
    (r"\e4", "digit-argument"),
    (r"\e5", "digit-argument"),
    (r"\e6", "digit-argument"),
    (r"\e7", "digit-argument"),
    (r"\e8", "digit-argument"),
    (r"\e9", "digit-argument"),
    (r"\el", "downcase-word"),
    (r"\e>", "end-of-history"),
    (r"\C-e", "end-of-line"),
    (r"\eOF", "end-of-line"),
    (r"\e[4~", "end-of-line"),
    (r"\e[F", "end-of-line"),
    (r"\C-f", "forward-char"),
    (r"\eOC", "forward-char"),
    (r"\e[C", "forward-char"),
    (r"\C-s", "forward-search-history"),
    (r"\e\e[C", "forward-word"),
    (r"\e[1;3C", "forward-word"),
    (r"\e[1;5C", "forward-word"),
    (r"\ef", "forward-word"),
    (r"\C-k", "kill-line"),
    (r"\ed", "kill-word"),
    (r"\C-n", "next-history"),
    (r"\eOB", "next-history"),
    (r"\e[B", "next-history"),
    (r"\C-p", "previous-history"),
    (r"\eOA", "previous-history"),
    (r"\e[A", "previous-history"),
    (r"\C-q", "quoted-insert"),
    (r"\C-v", "quoted-insert"),
    (r"\C-r", "reverse-search-history"),
    (r"\C-t", "transpose-chars"),
    (r"\et", "transpose-words"),
    (r"\C-_", "undo"),
    (r"\C-x\C-u", "undo"),
    (r"\C-u", "unix-line-discard"),
    (r"\C-w", "unix-word-rubout"),
    (r"\eu", "upcase-word"),
    (r"\C-y", "yank"),
    (r"\ey", "yank-pop"),
];

/// vi's insert mode in rush's editor.
const VI_INSERT: &[(&str, &str)] = &[
    (r"\C-j", "accept-line"),
    (r"\C-m", "accept-line"),
    (r"\eOD", "backward-char"),
    (r"\e[D", "backward-char"),
    (r"\C-h", "backward-delete-char"),
    (r"\C-?", "backward-delete-char"),
    (r"\eOH", "beginning-of-line"),
    (r"\e[H", "beginning-of-line"),
    (r"\e[200~", "bracketed-paste-begin"),
    (r"\C-i", "complete"),
    (r"\e[3~", "delete-char"),
    (r"\eOF", "end-of-line"),
    (r"\e[F", "end-of-line"),
    (r"\eOC", "forward-char"),
    (r"\e[C", "forward-char"),
    (r"\C-s", "forward-search-history"),
    (r"\eOB", "next-history"),
    (r"\e[B", "next-history"),
    (r"\eOA", "previous-history"),
    (r"\e[A", "previous-history"),
    (r"\C-v", "quoted-insert"),
    (r"\C-r", "reverse-search-history"),
    (r"\C-t", "transpose-chars"),
    (r"\C-u", "unix-line-discard"),
    (r"\C-w", "unix-word-rubout"),
    (r"\e", "vi-movement-mode"),
    (r"\C-y", "yank"),
];

/// vi's command mode in rush's editor.
const VI_COMMAND: &[(&str, &str)] = &[
    (r"\C-g", "abort"),
    (r"\C-j", "accept-line"),
    (r"\C-m", "accept-line"),
    (r"\eOD", "backward-char"),
    (r"\e[D", "backward-char"),
    (r"h", "backward-char"),
    (r"\C-h", "backward-char"),
    (r"0", "beginning-of-line"),
    (r"\eOH", "beginning-of-line"),
    (r"\e[H", "beginning-of-line"),
    (r"\C-l", "clear-screen"),
    (r"\e[3~", "delete-char"),
    (r"$", "end-of-line"),
    (r"\eOF", "end-of-line"),
    (r"\e[F", "end-of-line"),
    (r" ", "forward-char"),
    (r"l", "forward-char"),
    (r"\eOC", "forward-char"),
    (r"\e[C", "forward-char"),
    (r"\C-s", "forward-search-history"),
    (r"\C-k", "kill-line"),
    (r"+", "next-history"),
    (r"j", "next-history"),
    (r"\C-n", "next-history"),
    (r"\eOB", "next-history"),
    (r"\e[B", "next-history"),
    (r"-", "previous-history"),
    (r"k", "previous-history"),
    (r"\C-p", "previous-history"),
    (r"\eOA", "previous-history"),
    (r"\e[A", "previous-history"),
    (r"\C-v", "quoted-insert"),
    (r"\C-r", "reverse-search-history"),
    (r"\C-t", "transpose-chars"),
    (r"\C-u", "unix-line-discard"),
    (r"A", "vi-append-eol"),
    (r"a", "vi-append-mode"),
    (r"1", "vi-arg-digit"),
    (r"2", "vi-arg-digit"),
    (r"3", "vi-arg-digit"),
    (r"4", "vi-arg-digit"),
    (r"5", "vi-arg-digit"),
    (r"6", "vi-arg-digit"),
    (r"7", "vi-arg-digit"),
    (r"8", "vi-arg-digit"),
    (r"9", "vi-arg-digit"),
    (r"~", "vi-change-case"),
    (r"r", "vi-change-char"),
    (r"C", "vi-change-to"),
    (r"c", "vi-change-to"),
    (r",", "vi-char-search"),
    (r";", "vi-char-search"),
    (r"F", "vi-char-search"),
    (r"T", "vi-char-search"),
    (r"f", "vi-char-search"),
    (r"t", "vi-char-search"),
    (r"x", "vi-delete"),
    (r"D", "vi-delete-to"),
    (r"d", "vi-delete-to"),
    (r"E", "vi-end-word"),
    (r"e", "vi-end-word"),
    (r"\C-d", "vi-eof-maybe"),
    (r"^", "vi-first-print"),
    (r"I", "vi-insert-beg"),
    (r"i", "vi-insertion-mode"),
    (r"W", "vi-next-word"),
    (r"w", "vi-next-word"),
    (r"B", "vi-prev-word"),
    (r"b", "vi-prev-word"),
    (r"P", "vi-put"),
    (r"p", "vi-put"),
    (r".", "vi-redo"),
    (r"R", "vi-replace"),
    (r"X", "vi-rubout"),
    (r"S", "vi-subst"),
    (r"s", "vi-subst"),
    (r"u", "vi-undo"),
    (r"\C-_", "vi-undo"),
    (r"\C-w", "vi-unix-word-rubout"),
    (r"Y", "vi-yank-to"),
    (r"y", "vi-yank-to"),
    (r"\C-y", "yank"),
];

/// readline's variables with their values in rush: the on/off ones, then
/// the others (the order `bind -v` prints them in).
const BOOLEANS: &[(&str, bool)] = &[
    ("bind-tty-special-chars", true),
    ("blink-matching-paren", false),
    ("byte-oriented", false),
    ("colored-completion-prefix", false),
    ("colored-stats", false),
    ("completion-ignore-case", false),
    ("completion-map-case", false),
    ("convert-meta", false),
    ("disable-completion", false),
    ("echo-control-characters", true),
    ("enable-active-region", true),
    ("enable-bracketed-paste", true),
    ("enable-keypad", false),
    ("enable-meta-key", true),
    ("expand-tilde", false),
    ("history-preserve-point", false),
    ("horizontal-scroll-mode", false),
    ("input-meta", true),
    ("mark-directories", true),
    ("mark-modified-lines", false),
    ("mark-symlinked-directories", false),
    ("match-hidden-files", true),
    ("menu-complete-display-prefix", false),
    ("meta-flag", true),
    ("output-meta", true),
    ("page-completions", true),
    ("prefer-visible-bell", true),
    ("print-completions-horizontally", false),
    ("revert-all-at-newline", false),
    ("show-all-if-ambiguous", false),
    ("show-all-if-unmodified", false),
    ("show-mode-in-prompt", false),
    ("skip-completed-text", false),
    ("visible-stats", false),
];

const STRINGS: &[(&str, &str)] = &[
    // rush's editor does not ring the bell.
    ("bell-style", "none"),
    ("comment-begin", "#"),
    ("completion-display-width", "-1"),
    ("completion-prefix-display-length", "0"),
    ("completion-query-items", "100"),
    ("editing-mode", "emacs"),
    ("emacs-mode-string", "@"),
    ("history-size", "0"),
    ("keymap", "emacs"),
    ("keyseq-timeout", "500"),
    ("vi-cmd-mode-string", "(cmd)"),
    ("vi-ins-mode-string", "(ins)"),
];

/// One of the editor's keymaps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Map {
    Emacs,
    ViInsert,
    ViCommand,
}

impl Map {
    /// A keymap by readline's name, with the prefix its keys are under
    /// (`emacs-ctlx` is the keys after C-x, `emacs-meta` after ESC).
    pub fn by_name(name: &str) -> Option<(Map, &'static [u8])> {
        Some(match name {
            "emacs" | "emacs-standard" => (Map::Emacs, b""),
            "emacs-meta" => (Map::Emacs, b"\x1b"),
            "emacs-ctlx" => (Map::Emacs, b"\x18"),
            "vi" | "vi-move" | "vi-command" => (Map::ViCommand, b""),
            "vi-insert" => (Map::ViInsert, b""),
            _ => return None,
        })
    }

    fn index(self) -> usize {
        self as usize
    }

    fn defaults(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Map::Emacs => EMACS,
            Map::ViInsert => VI_INSERT,
            Map::ViCommand => VI_COMMAND,
        }
    }
}

/// What a key sequence does.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    /// A readline function.
    Function(String),
    /// A macro: the text is inserted as if typed.
    Macro(Vec<u8>),
    /// `bind -x`: a shell command, run with READLINE_LINE and
    /// READLINE_POINT set to the line being edited.
    Command(Vec<u8>),
}

/// The bindings of the three keymaps and the variables, created on first
/// use (a shell that never edits a line never builds them).
#[derive(Debug, Default)]
pub struct Keymaps {
    state: Option<Box<State>>,
    /// Counts changes, so that the editor applies them once.
    pub generation: u64,
}

#[derive(Debug)]
struct State {
    /// Each keymap's bindings, sorted by key sequence.
    maps: [Vec<(Vec<u8>, Action)>; 3],
    booleans: Vec<(&'static str, bool)>,
    strings: Vec<(&'static str, String)>,
}

/// A keymap's bindings before any `bind`, sorted by key sequence.
pub fn default_bindings(m: Map) -> Vec<(Vec<u8>, Action)> {
    let mut v: Vec<(Vec<u8>, Action)> = m
        .defaults()
        .iter()
        .map(|(k, f)| (translate(k.as_bytes()), Action::Function(f.to_string())))
        .collect();
    if m != Map::ViCommand {
        v.extend((b' '..=b'~').map(|c| (vec![c], Action::Function("self-insert".into()))));
    }
    v.sort();
    v
}

impl State {
    fn new() -> State {
        State {
            maps: [
                default_bindings(Map::Emacs),
                default_bindings(Map::ViInsert),
                default_bindings(Map::ViCommand),
            ],
            booleans: BOOLEANS.to_vec(),
            strings: STRINGS.iter().map(|(k, v)| (*k, v.to_string())).collect(),
        }
    }
}

/// Whether `name` is a function readline knows.
pub fn is_function(name: &str) -> bool {
    FUNCTIONS.binary_search(&name).is_ok()
}

impl Keymaps {
    fn state(&mut self) -> &mut State {
        self.state.get_or_insert_with(|| Box::new(State::new()))
    }

    /// The bindings of `map`, sorted by key sequence.
    pub fn bindings(&mut self, map: Map) -> &[(Vec<u8>, Action)] {
        &self.state().maps[map.index()]
    }

    /// Whether anything was changed from the defaults.
    pub fn is_default(&self) -> bool {
        self.state.is_none()
    }

    /// Binds `seq` to `action` in `map`.
    pub fn bind(&mut self, map: Map, seq: Vec<u8>, action: Action) {
        self.generation += 1;
        let v = &mut self.state().maps[map.index()];
        match v.binary_search_by(|(k, _)| k.as_slice().cmp(&seq)) {
            Ok(i) => v[i].1 = action,
            Err(i) => v.insert(i, (seq, action)),
        }
    }

    /// Removes the binding of `seq` in `map`.
    pub fn unbind(&mut self, map: Map, seq: &[u8]) {
        self.generation += 1;
        self.state().maps[map.index()].retain(|(k, _)| k != seq);
    }

    /// Removes every key bound to the function `name` in `map`.
    pub fn unbind_function(&mut self, map: Map, name: &str) {
        self.generation += 1;
        self.state().maps[map.index()]
            .retain(|(_, a)| !matches!(a, Action::Function(f) if f == name));
    }

    /// The key sequences bound to the function `name` in `map`.
    pub fn keys_of(&mut self, map: Map, name: &str) -> Vec<Vec<u8>> {
        self.bindings(map)
            .iter()
            .filter(|(_, a)| matches!(a, Action::Function(f) if f == name))
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// A variable's value as `bind -v` prints it. (Asking does not build
    /// the tables: an interactive shell asks at start.)
    pub fn variable(&self, name: &str) -> Option<String> {
        let on_off = |b: bool| if b { "on" } else { "off" }.to_string();
        let Some(st) = &self.state else {
            if let Some((_, b)) = BOOLEANS.iter().find(|(k, _)| *k == name) {
                return Some(on_off(*b));
            }
            return STRINGS
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string());
        };
        if let Some((_, b)) = st.booleans.iter().find(|(k, _)| *k == name) {
            return Some(on_off(*b));
        }
        st.strings
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone())
    }

    /// Whether the on/off variable `name` is on.
    pub fn is_on(&self, name: &str) -> bool {
        match &self.state {
            Some(st) => st.booleans.iter().any(|(k, b)| *k == name && *b),
            None => BOOLEANS.iter().any(|(k, b)| *k == name && *b),
        }
    }

    /// `set NAME VALUE`; `Err` with readline's complaint for a name it does
    /// not know.
    pub fn set_variable(&mut self, name: &str, value: &str) -> Result<(), String> {
        self.generation += 1;
        let st = self.state();
        // readline matches variable names without regard to case.
        if let Some((_, b)) = st
            .booleans
            .iter_mut()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
        {
            *b = value.is_empty() || value.eq_ignore_ascii_case("on") || value == "1";
            return Ok(());
        }
        let Some((key, v)) = st
            .strings
            .iter_mut()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
        else {
            return Err(format!("{name}: unknown variable name"));
        };
        let value = match *key {
            "bell-style" => match value.to_ascii_lowercase().as_str() {
                "none" | "off" => "none",
                "visible" => "visible",
                "audible" | "on" => "audible",
                _ => return Ok(()),
            }
            .to_string(),
            "editing-mode" => match value {
                "vi" | "emacs" => value.to_string(),
                _ => return Ok(()),
            },
            "keymap" => match Map::by_name(value) {
                Some(_) => value.to_string(),
                None => return Err(format!("{value}: invalid keymap name")),
            },
            "completion-query-items"
            | "completion-display-width"
            | "completion-prefix-display-length"
            | "history-size"
            | "keyseq-timeout" => value
                .trim()
                .parse::<i64>()
                .map(|n| n.to_string())
                .unwrap_or_else(|_| "0".to_string()),
            _ => value.to_string(),
        };
        *v = value;
        // Setting the editing mode sets the keymap with it.
        if *key == "editing-mode" {
            let mode = v.clone();
            if let Some((_, m)) = st.strings.iter_mut().find(|(k, _)| *k == "keymap") {
                *m = mode;
            }
        }
        Ok(())
    }

    /// The keymap that `set keymap` chose, for bindings that name none;
    /// `set -o vi` and `set -o emacs` choose too.
    pub fn current(&self, vi: bool) -> (Map, &'static [u8]) {
        let name = self.variable("keymap").unwrap_or_default();
        match Map::by_name(&name) {
            Some((Map::Emacs, _)) if vi => (Map::ViInsert, b""),
            Some((Map::ViInsert | Map::ViCommand, _)) if !vi => (Map::Emacs, b""),
            Some(m) => m,
            None => (Map::Emacs, b""),
        }
    }

    /// `bind -v` (`readable`) or `bind -V`.
    pub fn dump_variables(&mut self, readable: bool, vi: bool) -> String {
        let mode = if vi { "vi" } else { "emacs" };
        let st = self.state();
        let mut out = String::new();
        let strings = st.strings.iter().map(|(k, v)| {
            let v = if *k == "editing-mode" {
                mode
            } else {
                v.as_str()
            };
            (*k, v.to_string())
        });
        let all = st
            .booleans
            .iter()
            .map(|(k, b)| (*k, if *b { "on" } else { "off" }.to_string()))
            .chain(strings);
        for (k, v) in all {
            if readable {
                out.push_str(&format!("set {k} {v}\n"));
            } else {
                out.push_str(&format!("{k} is set to `{v}'\n"));
            }
        }
        out
    }

    /// `bind -p` (`readable`) or `bind -P`: each function and its keys.
    pub fn dump_functions(&mut self, map: Map, readable: bool) -> String {
        let mut out = String::from("\n");
        for name in FUNCTIONS {
            let keys = self.keys_of(map, name);
            if readable {
                if keys.is_empty() {
                    out.push_str(&format!("# {name} (not bound)\n"));
                }
                for k in &keys {
                    out.push_str(&format!("\"{}\": {name}\n", untranslate(k)));
                }
            } else if keys.is_empty() {
                out.push_str(&format!("{name} is not bound to any keys\n"));
            } else {
                let list: Vec<String> = keys
                    .iter()
                    .map(|k| format!("\"{}\"", untranslate(k)))
                    .collect();
                out.push_str(&format!("{name} can be found on {}.\n", list.join(", ")));
            }
        }
        out
    }

    /// `bind -s` (`readable`), `bind -S`, or `bind -X` (`commands`).
    pub fn dump_macros(&mut self, map: Map, readable: bool, commands: bool) -> String {
        let mut out = String::new();
        for (k, a) in self.bindings(map) {
            match a {
                Action::Macro(m) if !commands => {
                    if readable {
                        out.push_str(&format!("\"{}\": \"{}\"\n", untranslate(k), untranslate(m)));
                    } else {
                        out.push_str(&format!("{} outputs {}\n", untranslate(k), untranslate(m)));
                    }
                }
                Action::Command(c) if commands => {
                    let c = String::from_utf8_lossy(c).replace('"', "\\\"");
                    out.push_str(&format!("\"{}\": \"{c}\"\n", untranslate(k)));
                }
                _ => {}
            }
        }
        out
    }

    /// One line of an inputrc file or one `bind` argument: `set NAME
    /// VALUE`, `"keyseq": function`, `"keyseq": "macro"`, or `Key-name:
    /// …`. `Err` with readline's complaint.
    pub fn parse_and_bind(&mut self, line: &[u8], vi: bool) -> Result<(), String> {
        let line = trim(line);
        if line.is_empty() || line[0] == b'#' || line[0] == b'$' {
            return Ok(());
        }
        if let Some(rest) = strip_word(line, b"set") {
            let rest = trim(rest);
            let end = rest
                .iter()
                .position(|c| c.is_ascii_whitespace())
                .unwrap_or(rest.len());
            let name = String::from_utf8_lossy(&rest[..end]).into_owned();
            let value = String::from_utf8_lossy(trim(&rest[end..])).into_owned();
            // A string's value ends at white space, except a quoted one.
            let value = value.trim_matches('"').to_string();
            return self.set_variable(&name, &value);
        }
        let (seq, rest) = key_part(line)?;
        let (map, prefix) = self.current(vi);
        let seq = [prefix, &seq].concat();
        let rest = trim(rest);
        let action = match rest.first() {
            Some(&q @ (b'"' | b'\'')) => {
                let end = closing(rest, q).unwrap_or(rest.len());
                Action::Macro(translate(&rest[1..end]))
            }
            _ => {
                let end = rest
                    .iter()
                    .position(|c| c.is_ascii_whitespace())
                    .unwrap_or(rest.len());
                let name = String::from_utf8_lossy(&rest[..end]).into_owned();
                // readline ignores a name it does not know.
                match FUNCTIONS.iter().find(|f| f.eq_ignore_ascii_case(&name)) {
                    Some(f) => Action::Function(f.to_string()),
                    None => return Ok(()),
                }
            }
        };
        if seq.is_empty() {
            return Ok(());
        }
        self.bind(map, seq, action);
        Ok(())
    }

    /// `bind -x '"keyseq": command'`: the sequence must be quoted, the
    /// command may be; `Err` with bash's complaint.
    pub fn bind_command(&mut self, spec: &[u8], vi: bool) -> Result<(), String> {
        let text = String::from_utf8_lossy(spec).into_owned();
        let s = spec.trim_ascii_start();
        if s.first() != Some(&b'"') {
            return Err(format!(
                "{text}: first non-whitespace character is not `\"'"
            ));
        }
        let Some(end) = closing(s, b'"') else {
            return Err(format!("no closing `\"' in {text}"));
        };
        let seq = translate(&s[1..end]);
        let Some(colon) = s[end..].iter().position(|&c| c == b':') else {
            return Err(format!("{text}: missing colon separator"));
        };
        let rest = s[end + colon + 1..].trim_ascii_start();
        let cmd = match rest.first() {
            Some(&q @ (b'"' | b'\'')) => match closing(rest, q) {
                Some(e) => rest[1..e].to_vec(),
                None => return Err(format!("no closing `{}' in {text}", q as char)),
            },
            _ => rest.to_vec(),
        };
        let (map, prefix) = self.current(vi);
        self.bind(map, [prefix, &seq].concat(), Action::Command(cmd));
        Ok(())
    }

    /// An inputrc file's text (`bind -f`, ~/.inputrc): each line as
    /// [`Keymaps::parse_and_bind`], under `$if`/`$else`/`$endif`, with
    /// `$include`. `env` answers `$if term=…` and the application name;
    /// the complaints, each with the file's name and line.
    pub fn read_init(
        &mut self,
        name: &str,
        text: &[u8],
        term: &str,
        vi: bool,
        depth: usize,
    ) -> Vec<String> {
        let mut errors = Vec::new();
        // Whether each open `$if` is taking its lines, and whether the
        // lines around it were.
        let mut stack: Vec<(bool, bool)> = Vec::new();
        let taking = |stack: &[(bool, bool)]| stack.iter().all(|(on, _)| *on);
        for (n, raw) in text.split(|&c| c == b'\n').enumerate() {
            let line = trim(raw);
            if let Some(d) = line.strip_prefix(b"$") {
                let d = String::from_utf8_lossy(d).into_owned();
                let (word, arg) = d.split_once(char::is_whitespace).unwrap_or((&d, ""));
                let arg = arg.trim();
                match word {
                    "if" => {
                        let outer = taking(&stack);
                        let on = outer && self.condition(arg, term, vi);
                        stack.push((on, outer));
                    }
                    "else" => match stack.last_mut() {
                        Some((on, outer)) => *on = *outer && !*on,
                        None => errors.push(format!(
                            "readline: {name}: line {}: $else found without matching $if",
                            n + 1
                        )),
                    },
                    // The guard closes the innermost `$if`.
                    "endif" if stack.pop().is_none() => {
                        errors.push(format!(
                            "readline: {name}: line {}: $endif without matching $if",
                            n + 1
                        ));
                    }
                    "include" if taking(&stack) && depth < 16 => {
                        let path = expand_home(arg);
                        if let Ok(t) = std::fs::read(&path) {
                            errors.extend(self.read_init(&path, &t, term, vi, depth + 1));
                        }
                    }
                    _ => {}
                }
                continue;
            }
            if !taking(&stack) {
                continue;
            }
            if let Err(e) = self.parse_and_bind(line, vi) {
                errors.push(format!("readline: {name}: line {}: {e}", n + 1));
            }
        }
        errors
    }

    /// `$if` conditions: `mode=emacs|vi`, `term=NAME`, `version OP N`, a
    /// variable `NAME=VALUE`, or the application's name (rush answers to
    /// `Bash`, whose init files it reads, and to `rush`).
    fn condition(&mut self, arg: &str, term: &str, vi: bool) -> bool {
        if let Some(m) = arg.strip_prefix("mode=") {
            return m == if vi { "vi" } else { "emacs" };
        }
        if let Some(t) = arg.strip_prefix("term=") {
            let base = term.split('-').next().unwrap_or(term);
            return t == term || t == base;
        }
        if let Some(rest) = arg.strip_prefix("version") {
            let rest = rest.trim();
            let (op, num) = ["==", "!=", "<=", ">=", "=", "<", ">"]
                .iter()
                .find_map(|op| rest.strip_prefix(op).map(|n| (*op, n.trim())))
                .unwrap_or(("=", rest));
            let ours = 8.2;
            let Ok(n) = num.parse::<f64>() else {
                return false;
            };
            return match op {
                "==" | "=" => ours == n,
                "!=" => ours != n,
                "<=" => ours <= n,
                ">=" => ours >= n,
                "<" => ours < n,
                _ => ours > n,
            };
        }
        if let Some((k, v)) = arg.split_once('=') {
            return self
                .variable(k.trim())
                .is_some_and(|now| now.eq_ignore_ascii_case(v.trim()));
        }
        arg.eq_ignore_ascii_case("bash") || arg.eq_ignore_ascii_case("rush")
    }
}

fn expand_home(path: &str) -> String {
    match path.strip_prefix("~/") {
        Some(rest) => format!("{}/{rest}", std::env::var("HOME").unwrap_or_default()),
        None => path.to_string(),
    }
}

fn trim(b: &[u8]) -> &[u8] {
    b.trim_ascii()
}

/// `word` at the start of `line`, followed by white space.
fn strip_word<'a>(line: &'a [u8], word: &[u8]) -> Option<&'a [u8]> {
    let rest = line.strip_prefix(word)?;
    rest.first()
        .is_some_and(u8::is_ascii_whitespace)
        .then_some(rest)
}

/// The index of the quote that closes the one at `s[0]`.
fn closing(s: &[u8], q: u8) -> Option<usize> {
    let mut i = 1;
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            c if c == q => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The key part of a binding (a quoted sequence or a key name) as bytes,
/// and what follows its colon.
fn key_part(line: &[u8]) -> Result<(Vec<u8>, &[u8]), String> {
    if line.first() == Some(&b'"') {
        let Some(end) = closing(line, b'"') else {
            return Err(format!(
                "`{}': no closing `\"' in key binding",
                String::from_utf8_lossy(line)
            ));
        };
        let seq = translate(&line[1..end]);
        let rest = trim(&line[end + 1..]);
        let rest = rest.strip_prefix(b":").unwrap_or(rest);
        return Ok((seq, rest));
    }
    let Some(colon) = line.iter().position(|&c| c == b':') else {
        return Err(format!(
            "`{}': missing colon separator",
            String::from_utf8_lossy(line)
        ));
    };
    let name = String::from_utf8_lossy(trim(&line[..colon])).into_owned();
    Ok((key_name(&name), &line[colon + 1..]))
}

/// A key written by name: `Control-u`, `C-u`, `Meta-Rubout`, `M-x`,
/// `Rubout`, `ESC`, `TAB`, … or one character.
fn key_name(name: &str) -> Vec<u8> {
    let lower = name.to_ascii_lowercase();
    for (p, meta) in [
        ("meta-", true),
        ("m-", true),
        ("control-", false),
        ("c-", false),
    ] {
        if lower.starts_with(p) && name.len() > p.len() {
            let inner = key_name(&name[p.len()..]);
            return if meta {
                [&[0x1b][..], &inner].concat()
            } else {
                inner.into_iter().map(ctrl).collect()
            };
        }
    }
    match lower.as_str() {
        "rubout" | "del" => vec![0x7f],
        "escape" | "esc" => vec![0x1b],
        "lfd" | "newline" => vec![b'\n'],
        "ret" | "return" => vec![b'\r'],
        "spc" | "space" => vec![b' '],
        "tab" => vec![b'\t'],
        _ => name
            .as_bytes()
            .first()
            .map(|&c| vec![c])
            .unwrap_or_default(),
    }
}

fn ctrl(c: u8) -> u8 {
    if c == b'?' {
        0x7f
    } else {
        c.to_ascii_uppercase() & 0x1f
    }
}

/// readline's notation for a key sequence or a macro, as bytes: `\C-x`,
/// `\M-x`, `\e`, `\\`, `\"`, `\'`, `\a` `\b` `\d` `\f` `\n` `\r` `\t`
/// `\v`, `\NNN` (octal) and `\xHH`.
pub fn translate(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        if s[i] != b'\\' || i + 1 == s.len() {
            out.push(s[i]);
            i += 1;
            continue;
        }
        let (key, used) = one_key(&s[i..]);
        out.extend(key);
        i += used;
    }
    out
}

/// One key at the start of `s` (an escape or a character), and the bytes
/// it took.
fn one_key(s: &[u8]) -> (Vec<u8>, usize) {
    let Some(&first) = s.first() else {
        return (Vec::new(), 0);
    };
    if first != b'\\' || s.len() == 1 {
        return (vec![first], 1);
    }
    if s[1..].starts_with(b"C-") || s[1..].starts_with(b"M-") {
        let (inner, used) = one_key(&s[3..]);
        let key = if s[1] == b'M' {
            [&[0x1b][..], &inner].concat()
        } else {
            inner.into_iter().map(ctrl).collect()
        };
        return (key, 3 + used);
    }
    let c = s[1];
    let simple = match c {
        b'e' => Some(0x1b),
        b'a' => Some(7),
        b'b' => Some(8),
        b'd' => Some(0x7f),
        b'f' => Some(12),
        b'n' => Some(b'\n'),
        b'r' => Some(b'\r'),
        b't' => Some(b'\t'),
        b'v' => Some(11),
        _ => None,
    };
    if let Some(b) = simple {
        return (vec![b], 2);
    }
    if c.is_ascii_digit() && c < b'8' {
        let digits = s[1..]
            .iter()
            .take(3)
            .take_while(|d| (b'0'..b'8').contains(d))
            .count();
        let v = s[1..1 + digits]
            .iter()
            .fold(0u32, |a, d| a * 8 + u32::from(d - b'0'));
        return (vec![v as u8], 1 + digits);
    }
    if c == b'x' {
        let digits = s[2..]
            .iter()
            .take(2)
            .take_while(|d| d.is_ascii_hexdigit())
            .count();
        if digits > 0 {
            let text = std::str::from_utf8(&s[2..2 + digits]).unwrap_or("0");
            return (vec![u8::from_str_radix(text, 16).unwrap_or(0)], 2 + digits);
        }
    }
    (vec![c], 2)
}

/// Bytes in readline's notation, as `bind -p` prints them.
pub fn untranslate(b: &[u8]) -> String {
    let mut out = String::new();
    for &c in b {
        match c {
            0x1b => out.push_str("\\e"),
            0x7f => out.push_str("\\C-?"),
            b'\\' => out.push_str("\\\\"),
            b'"' => out.push_str("\\\""),
            0..=0x1f => {
                out.push_str("\\C-");
                let k = c | 0x60;
                match c {
                    0 => out.push('@'),
                    0x1c..=0x1f => {
                        if c == 0x1c {
                            out.push_str("\\\\");
                        } else {
                            out.push((c + 0x40) as char);
                        }
                    }
                    _ => out.push(k as char),
                }
            }
            0x80.. => out.push_str(&format!("\\{c:03o}")),
            _ => out.push(c as char),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notation_round_trips() {
        for s in [
            r"\C-a",
            r"\e[A",
            r"\C-x\C-?",
            r"\e\C-h",
            r"\C-\\",
            r"\C-]",
            r"\C-@",
            r"\200",
            r#"\"q"#,
        ] {
            assert_eq!(untranslate(&translate(s.as_bytes())), s, "{s}");
        }
        assert_eq!(translate(br"\M-x"), b"\x1bx");
        assert_eq!(translate(br"\x41\101\t"), b"AA\t");
        assert_eq!(key_name("Control-u"), vec![0x15]);
        assert_eq!(key_name("Meta-Rubout"), vec![0x1b, 0x7f]);
    }

    /// Reading a variable, as an interactive shell does at start, does
    /// not build the keymaps (the start-up cost is measured).
    #[test]
    fn asking_builds_nothing() {
        let k = Keymaps::default();
        assert_eq!(k.variable("editing-mode").as_deref(), Some("emacs"));
        assert_eq!(k.variable("mark-directories").as_deref(), Some("on"));
        assert!(k.is_default());
    }

    #[test]
    fn the_function_list_is_sorted() {
        assert!(FUNCTIONS.windows(2).all(|w| w[0] < w[1]));
        for m in [Map::Emacs, Map::ViInsert, Map::ViCommand] {
            for (_, f) in m.defaults() {
                assert!(is_function(f), "{f}");
            }
        }
    }
}
