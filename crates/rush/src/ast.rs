//! The syntax tree the parser produces and the executor walks.
//!
//! Shell text is bytes, not necessarily UTF-8, so every literal is a
//! `Vec<u8>`. Nodes that the executor may keep beyond one run of the tree
//! (function bodies) are behind `Rc`, so defining a function copies nothing.

use std::cell::OnceCell;
use std::rc::Rc;

/// A list: and-or lists separated by `;`, `&` or newlines.
#[derive(Debug, Clone, Default)]
pub struct List {
    pub items: Vec<Item>,
}

/// One and-or list and how it ends.
#[derive(Debug, Clone)]
pub struct Item {
    pub and_or: AndOr,
    /// Ended by `&`: run in the background.
    pub background: bool,
}

/// `p1 && p2 || p3`.
#[derive(Debug, Clone)]
pub struct AndOr {
    pub first: Pipeline,
    pub rest: Vec<(Connector, Pipeline)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connector {
    And,
    Or,
}

/// `[!] c1 | c2 | …`
#[derive(Debug, Clone)]
pub struct Pipeline {
    pub bang: bool,
    /// `time` was given (bash): report the elapsed time.
    pub timed: bool,
    /// `time -p`: in POSIX's format, whatever TIMEFORMAT says.
    pub posix_time: bool,
    pub commands: Vec<Command>,
    /// `|&` after the command at the same index (bash): stderr goes too.
    pub stderr_too: Vec<bool>,
}

#[derive(Debug, Clone)]
pub enum Command {
    Simple(Simple),
    Compound(Box<Compound>, Vec<Redirect>),
    Function(Rc<Function>),
}

/// `NAME=value … word … redirection …`
#[derive(Debug, Clone, Default)]
pub struct Simple {
    pub assigns: Vec<Assign>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
    pub line: u32,
}

#[derive(Debug, Clone)]
pub struct Assign {
    pub name: Vec<u8>,
    /// `name[sub]=…` (bash arrays): the subscript.
    pub index: Option<Word>,
    /// `+=` (bash): append.
    pub append: bool,
    pub value: Word,
    /// `name=(…)` (bash arrays): the elements, each with its `[key]=` if
    /// written.
    pub array: Option<Vec<Element>>,
}

/// One element of `name=(…)`: `value`, `[key]=value` or `[key]+=value`.
#[derive(Debug, Clone)]
pub struct Element {
    pub key: Option<Word>,
    /// `[key]+=value`: appended to what the element holds.
    pub append: bool,
    pub value: Word,
}

#[derive(Debug, Clone)]
pub enum Compound {
    Brace(List),
    Subshell(List),
    If {
        /// `if c then b`, then each `elif c then b`.
        arms: Vec<(List, List)>,
        otherwise: Option<List>,
    },
    Loop {
        until: bool,
        cond: List,
        body: List,
    },
    For {
        var: Vec<u8>,
        /// `None`: no `in`, iterate over "$@".
        words: Option<Vec<Word>>,
        body: List,
        line: u32,
        /// `select` (bash): a menu of the words, the user's choice in
        /// `var`, until `break` or the end of input.
        select: bool,
    },
    Case {
        word: Word,
        arms: Vec<CaseArm>,
        line: u32,
    },
    /// `(( expr ))` (bash).
    Arith {
        expr: Word,
        line: u32,
    },
    /// `for (( init; cond; step ))` (bash); an empty cond is true.
    ArithFor {
        init: Word,
        cond: Word,
        step: Word,
        body: List,
        line: u32,
    },
    /// `coproc [NAME] command` (bash): the command runs in the background
    /// with pipes to and from the shell, whose ends are in `NAME[1]` and
    /// `NAME[0]` (NAME is COPROC when not given), its pid in `NAME_PID`.
    Coproc {
        name: Vec<u8>,
        cmd: Box<Command>,
    },
    /// `[[ … ]]` (bash), kept as words and evaluated like `test`.
    DoubleBracket {
        words: Vec<Word>,
        line: u32,
    },
}

#[derive(Debug, Clone)]
pub struct CaseArm {
    pub patterns: Vec<Word>,
    pub body: List,
    pub end: CaseEnd,
}

/// How a case arm ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseEnd {
    /// `;;`
    Break,
    /// `;&`: run the next arm's body too.
    FallThrough,
    /// `;;&`: test the next patterns too.
    Continue,
}

#[derive(Debug)]
pub struct Function {
    pub name: Vec<u8>,
    pub body: Compound,
    pub redirects: Vec<Redirect>,
    /// The line its definition starts on (`declare -F` with `extdebug`).
    pub line: u32,
    /// The line its body starts on (the DEBUG trap on entering it).
    pub body_line: u32,
    /// The line its definition ends on (bash's line for errors in
    /// defining it).
    pub end_line: u32,
}

#[derive(Debug, Clone)]
pub struct Redirect {
    /// The explicit fd (`2>`), or `None` for the operator's default.
    pub fd: Option<i32>,
    pub op: RedirOp,
    pub target: RedirTarget,
    /// `{name}>file` (bash): the shell picks the fd (10 or above) and
    /// assigns its number to `name`; `{name}>&-` closes the fd it names.
    pub var: Option<Vec<u8>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirOp {
    /// `<`
    In,
    /// `>`
    Out,
    /// `>|`
    Clobber,
    /// `>>`
    Append,
    /// `<>`
    ReadWrite,
    /// `<&`
    DupIn,
    /// `>&`
    DupOut,
    /// `<<` and `<<-`
    HereDoc,
    /// `<<<` (bash)
    HereString,
    /// `&>` (bash): stdout and stderr to a file.
    OutErr,
    /// `&>>` (bash)
    AppendOutErr,
}

impl RedirOp {
    /// The fd an operator applies to when none is written.
    pub fn default_fd(self) -> i32 {
        match self {
            RedirOp::In | RedirOp::ReadWrite | RedirOp::DupIn => 0,
            RedirOp::HereDoc | RedirOp::HereString => 0,
            _ => 1,
        }
    }
}

#[derive(Debug, Clone)]
pub enum RedirTarget {
    Word(Word),
    HereDoc(Rc<HereDoc>),
}

/// A here-document. Its body is read after the line that names it, so it is
/// filled in once the parser reaches it.
#[derive(Debug, Default)]
pub struct HereDoc {
    /// The delimiter was quoted: the body is literal.
    pub quoted: bool,
    /// `<<-`: leading tabs are stripped.
    pub strip_tabs: bool,
    pub body: OnceCell<Word>,
    /// The body as written, which `declare -f` prints back as bash does
    /// (backquotes stay backquotes, blanks inside `$( )` stay).
    pub text: OnceCell<Vec<u8>>,
    /// The delimiter, quotes removed (`declare -f` prints it back).
    pub delim: Vec<u8>,
}

/// A word: parts that expand and then join.
#[derive(Debug, Clone, Default)]
pub struct Word {
    pub parts: Vec<Part>,
}

impl Word {
    pub fn literal(bytes: &[u8]) -> Self {
        Word {
            parts: vec![Part::Lit(bytes.to_vec())],
        }
    }

    /// The word's text, if it is one unquoted literal (a reserved word, an
    /// alias, a name).
    pub fn as_plain(&self) -> Option<&[u8]> {
        match self.parts.as_slice() {
            [Part::Lit(b)] => Some(b),
            _ => None,
        }
    }

    /// Whether any part of it was quoted (here-doc delimiters, `case`
    /// patterns, assignments).
    pub fn has_quotes(&self) -> bool {
        self.parts.iter().any(|p| {
            matches!(
                p,
                Part::Quoted(_) | Part::Single(_) | Part::Escaped(_) | Part::Double(_)
            )
        })
    }

    /// The word with its quotes removed, expansions kept as written: for
    /// here-doc delimiters.
    pub fn unquoted_text(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for p in &self.parts {
            p.push_text(&mut out);
        }
        out
    }
}

/// A piece of a word.
#[derive(Debug, Clone)]
pub enum Part {
    /// Unquoted text: split, globbed.
    Lit(Vec<u8>),
    /// `\c` outside quotes.
    Escaped(u8),
    /// `'…'` (or `$'…'`, already decoded).
    Single(Vec<u8>),
    /// Literal text quoted by `"…"`.
    Quoted(Vec<u8>),
    /// `"…"`: its parts are quoted.
    Double(Vec<Part>),
    /// `$name`, `${…}`.
    Param(Box<Param>),
    /// `$(…)` and backticks; for backticks, the text between them as
    /// written (`declare -f` prints it back unchanged, as bash does).
    CommandSub(Rc<List>, Option<Rc<[u8]>>),
    /// `$((…))`: the expression as a word (expanded, then evaluated).
    Arith(Word),
    /// `name=(…)` as an argument of `declare`, `local` and the like.
    ArrayAssign(Box<Assign>),
    /// A `${…}` that is not valid: an error when expanded, as in bash.
    /// Boxed: rare.
    BadSubst(Box<BadSubst>),
    /// A here-document's body that does not parse (an unclosed `$(`): bash
    /// parses a body only when it expands it, so the error comes then.
    /// Boxed: a rare part that must not make every part bigger.
    Unparsed(Box<Unparsed>),
    /// `<(list)` (`read`: the command reads what the list writes) or
    /// `>(list)` (bash): expands to a `/dev/fd/N` path.
    ProcSubst { read: bool, list: Rc<List> },
}

/// A `${…}` that is not valid.
#[derive(Debug, Clone)]
pub struct BadSubst {
    /// The text the error names, as bash names it (a `$'…'` in double
    /// quotes already decoded to `'…'`).
    pub message: Vec<u8>,
    /// The text as written, for `declare -f`.
    pub written: Vec<u8>,
}

/// A here-document's body that did not parse: the body as written, and
/// the error's lines (`line N: message`), each to be prefixed with the
/// file's name and `command substitution: `.
#[derive(Debug, Clone)]
pub struct Unparsed {
    pub text: Vec<u8>,
    pub error: Vec<Vec<u8>>,
}

impl Part {
    fn push_text(&self, out: &mut Vec<u8>) {
        match self {
            Part::Lit(b) | Part::Single(b) | Part::Quoted(b) => {
                out.extend_from_slice(b);
            }
            Part::BadSubst(b) => out.extend_from_slice(&b.message),
            Part::Unparsed(u) => out.extend_from_slice(&u.text),
            Part::Escaped(c) => out.push(*c),
            Part::Double(parts) => {
                for p in parts {
                    p.push_text(out);
                }
            }
            Part::Param(p) => {
                out.push(b'$');
                out.extend_from_slice(&p.name);
            }
            Part::CommandSub(..)
            | Part::Arith(_)
            | Part::ArrayAssign(_)
            | Part::ProcSubst { .. } => {}
        }
    }
}

/// A parameter expansion.
#[derive(Debug, Clone)]
pub struct Param {
    /// A name, a digit string, or one of `@*#?-$!0`.
    pub name: Vec<u8>,
    /// `${name[sub]}` (bash arrays): the subscript.
    pub index: Option<Word>,
    /// `${!name}` (bash): indirection.
    pub indirect: bool,
    pub op: ParamOp,
    /// `$name` without braces: brace expansion may lengthen the name
    /// (`$v{x,y}` is `$vx $vy` in bash).
    pub bare: bool,
}

#[derive(Debug, Clone)]
pub enum ParamOp {
    /// `$x`, `${x}`
    Plain,
    /// `${#x}`
    Length,
    /// `${x-w}` / `${x:-w}` (colon: also when empty)
    Default { colon: bool, word: Word },
    /// `${x=w}` / `${x:=w}`
    Assign { colon: bool, word: Word },
    /// `${x?w}` / `${x:?w}`
    Error { colon: bool, word: Word },
    /// `${x+w}` / `${x:+w}`
    Alternative { colon: bool, word: Word },
    /// `${x#p}` / `${x##p}`
    TrimPrefix { longest: bool, pattern: Word },
    /// `${x%p}` / `${x%%p}`
    TrimSuffix { longest: bool, pattern: Word },
    /// `${x/p/r}`, `${x//p/r}`, `${x/#p/r}`, `${x/%p/r}` (bash)
    Replace {
        all: bool,
        anchor: Anchor,
        pattern: Word,
        with: Word,
        /// The `/` before the replacement was written (`${x/p/}`, not
        /// `${x/p}`): the same meaning, kept for `declare -f`.
        slash: bool,
    },
    /// `${x:offset}` / `${x:offset:length}` (bash)
    Slice { offset: Word, length: Option<Word> },
    /// `${x^}` `${x^^}` `${x,}` `${x,,}` (bash)
    /// `${x^}`, `${x^^}`, `${x,}`, `${x,,}`, with an optional pattern
    /// each changed character must match (empty: every character).
    Case {
        upper: bool,
        all: bool,
        pattern: Word,
    },
    /// `${x@Q}`, `@E`, `@U`, `@u`, `@L`, `@A`, `@a` (bash): quoted,
    /// escapes expanded, case changed, as an assignment, attributes.
    Transform(u8),
    /// `${!prefix*}` / `${!prefix@}` (bash): the names of the variables
    /// that start with the prefix (`name`).
    Names { star: bool },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    None,
    Start,
    End,
}

/// Reserved words, for `type`, `command -v` and completion.
pub const KEYWORDS: &[&[u8]] = &[
    b"if",
    b"then",
    b"else",
    b"elif",
    b"fi",
    b"case",
    b"esac",
    b"for",
    b"select",
    b"coproc",
    b"while",
    b"until",
    b"do",
    b"done",
    b"in",
    b"{",
    b"}",
    b"!",
    b"[[",
    b"]]",
    b"function",
    b"time",
];
