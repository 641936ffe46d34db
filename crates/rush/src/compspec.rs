//! Programmable completion's state: the specification `complete` keeps
//! for a command (what `compgen` and the line editor generate from, in
//! `builtins/complete.rs`).

use std::collections::BTreeSet;

/// How to complete the words of one command (or `-D`, `-E`, `-I`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompSpec {
    /// `-o` options: bashdefault, default, dirnames, filenames, noquote,
    /// nosort, nospace, plusdirs.
    pub options: BTreeSet<&'static str>,
    /// Actions (`-A NAME` and the letters), in bash's order when printed.
    pub actions: BTreeSet<Action>,
    pub glob: Option<Vec<u8>>,
    pub wordlist: Option<Vec<u8>>,
    pub prefix: Option<Vec<u8>>,
    pub suffix: Option<Vec<u8>>,
    pub filter: Option<Vec<u8>>,
    pub function: Option<Vec<u8>>,
    pub command: Option<Vec<u8>>,
    /// When the name was first given a specification, for listing in the
    /// order of bash's table (0 until stored).
    pub seq: u64,
}

/// What an action generates. The order is bash's printing order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Action {
    Alias,
    Builtin,
    Command,
    Directory,
    Export,
    File,
    Group,
    Job,
    Keyword,
    Service,
    User,
    Variable,
    ArrayVar,
    Binding,
    Disabled,
    Enabled,
    Function,
    HelpTopic,
    Hostname,
    Running,
    SetOpt,
    ShOpt,
    Signal,
    Stopped,
}
