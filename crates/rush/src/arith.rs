//! Shell arithmetic: `$((…))`, `((…))`, `let`, and array subscripts.
//!
//! The expression (already expanded) is parsed into a small tree and then
//! evaluated, so that `&&`, `||` and `?:` skip the side effects of the branch
//! they do not take. Integers are 64-bit and wrap, as in bash and dash.

use std::fmt;

/// Variables, as arithmetic sees them.
pub trait Env {
    /// The value of a variable, if set.
    fn get(&mut self, name: &[u8]) -> Result<Option<Vec<u8>>>;
    /// Assigns a variable (fails on a readonly one).
    fn set(&mut self, name: &[u8], value: i64) -> Result<()>;
    /// `a[expr]` with its subscript evaluated, once, for a step or an
    /// assignment that reads and then writes it (`a[RANDOM%6]++`).
    fn pin(&mut self, name: &[u8]) -> Result<Vec<u8>> {
        Ok(name.to_vec())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub message: String,
    /// Already reported by the environment (an error in a subscript it
    /// evaluated): the caller only stops.
    pub reported: bool,
}

impl Error {
    pub fn new(message: String) -> Self {
        Error {
            message,
            reported: false,
        }
    }

    pub fn reported() -> Self {
        Error {
            message: String::new(),
            reported: true,
        }
    }

    /// The message with bash's error token: `text` from `at` on.
    fn at(mut self, text: &[u8], at: usize) -> Self {
        let token = text.get(at..).unwrap_or_default();
        self.message = format!(
            "{} (error token is \"{}\")",
            self.message,
            String::from_utf8_lossy(token)
        );
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug, Clone, PartialEq)]
enum Expr {
    Num(i64),
    Var(Vec<u8>),
    Unary(&'static str, Box<Expr>),
    /// `++x`, `--x` (prefix) or `x++`, `x--` (postfix).
    Step {
        name: Vec<u8>,
        delta: i64,
        prefix: bool,
    },
    /// The operator, its operands, and where bash's error token starts
    /// for a fault in it (division by 0): the right operand's first token.
    Binary(&'static str, Box<Expr>, Box<Expr>, usize),
    Assign(&'static str, Vec<u8>, Box<Expr>, usize),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    Comma(Box<Expr>, Box<Expr>),
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(i64),
    Name(Vec<u8>),
    Op(&'static str),
}

const OPS: &[&str] = &[
    "<<=", ">>=", "**", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "*=", "/=",
    "%=", "+=", "-=", "&=", "^=", "|=", "+", "-", "*", "/", "%", "<", ">", "&", "^", "|", "!", "~",
    "?", ":", "=", ",", "(", ")",
];

fn err<T>(message: impl Into<String>) -> Result<T> {
    Err(Error::new(message.into()))
}

/// Blanks between tokens, as bash's arithmetic counts them: space, tab
/// and newline (a carriage return is an error).
fn is_blank(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n')
}

/// `s` from its first character that is not a blank.
fn skip_blanks(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&c| is_blank(c)).count();
    &s[n..]
}

/// The tokens of `s`, and where each starts (for bash's "error token",
/// the text from the last token read).
fn lex(s: &[u8]) -> Result<(Vec<Tok>, Vec<usize>)> {
    let mut out = Vec::new();
    let mut starts = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if is_blank(c) {
            i += 1;
            continue;
        }
        starts.push(i);
        if c.is_ascii_digit() {
            let start = i;
            while i < s.len()
                && (s[i].is_ascii_alphanumeric() || matches!(s[i], b'#' | b'_' | b'@'))
            {
                i += 1;
            }
            out.push(Tok::Num(number(&s[start..i])?));
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < s.len() && (s[i].is_ascii_alphanumeric() || s[i] == b'_') {
                i += 1;
            }
            // `a[expr]`: the subscript stays part of the name, for the
            // environment to evaluate.
            if i < s.len() && s[i] == b'[' {
                let mut depth = 0;
                while i < s.len() {
                    match s[i] {
                        // A quoted character (the shell quotes what a
                        // subscript expanded to) is not a bracket.
                        b'\\' => i += 1,
                        b'[' => depth += 1,
                        b']' => {
                            depth -= 1;
                            if depth == 0 {
                                i += 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                if depth != 0 {
                    return err(format!(
                        "{}: bad array subscript (error token is \"{}\")",
                        String::from_utf8_lossy(s).trim(),
                        String::from_utf8_lossy(&s[start..])
                    ));
                }
            }
            out.push(Tok::Name(s[start..i].to_vec()));
            continue;
        }
        match OPS
            .iter()
            .copied()
            .find(|op| s[i..].starts_with(op.as_bytes()))
        {
            // `++`/`--` as bash reads them: after a variable, its postfix
            // step; before one (blanks between allowed), its prefix step;
            // otherwise two signs (`4++` is 4 + +...).
            Some(op @ ("++" | "--")) => {
                let after_var = matches!(out.last(), Some(Tok::Name(_)));
                let before_var = s[i + 2..]
                    .iter()
                    .find(|&&c| !is_blank(c))
                    .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_');
                if after_var || before_var {
                    out.push(Tok::Op(op));
                    i += 2;
                } else {
                    out.push(Tok::Op(&op[..1]));
                    i += 1;
                }
            }
            Some(op) => {
                out.push(Tok::Op(op));
                i += op.len();
            }
            // Where an operand goes bash says an operand is expected;
            // after one, that the operator is not one.
            None => {
                let operand = matches!(out.last(), None | Some(Tok::Op(_)))
                    && !matches!(out.last(), Some(Tok::Op(")" | "++" | "--")));
                return err(format!(
                    "{}: syntax error: {} (error token is \"{}\")",
                    String::from_utf8_lossy(skip_blanks(s)),
                    if operand {
                        "operand expected"
                    } else {
                        "invalid arithmetic operator"
                    },
                    String::from_utf8_lossy(&s[i..])
                ));
            }
        }
    }
    Ok((out, starts))
}

/// A numeric constant: decimal, `0x` hex, `0` octal, or `base#digits`.
pub fn number(t: &[u8]) -> Result<i64> {
    // bash's words: no digits after `base#` is an invalid constant, a
    // digit the base lacks is too great for it, a second `#` an invalid
    // number.
    let said = |what: &str| {
        err(format!(
            "{}: {what} (error token is \"{}\")",
            String::from_utf8_lossy(t),
            String::from_utf8_lossy(t)
        ))
    };
    let bad = || said("value too great for base");
    // A second `#`, or one after a number that has a base already (a
    // leading 0 or 0x), is an invalid number (bash).
    if t.iter().filter(|&&c| c == b'#').count() > 1
        || t.len() > 1 && t[0] == b'0' && t.contains(&b'#')
    {
        return said("invalid number");
    }
    let (base, digits): (u32, &[u8]) = if let Some(h) = t.iter().position(|&c| c == b'#') {
        let b: u32 = match std::str::from_utf8(&t[..h])
            .ok()
            .and_then(|b| b.parse().ok())
        {
            Some(b) if (2..=64).contains(&b) => b,
            Some(0 | 1) => return said("invalid number"),
            _ => return said("invalid arithmetic base"),
        };
        if h + 1 == t.len() {
            return said("invalid integer constant");
        }
        (b, &t[h + 1..])
    } else if t.starts_with(b"0x") || t.starts_with(b"0X") {
        // `0x` alone is 0 (bash's strlong reads no digit after it).
        (16, &t[2..])
    } else if t.len() > 1 && t[0] == b'0' {
        (8, &t[1..])
    } else {
        (10, t)
    };
    if digits.is_empty() && base != 16 {
        return bad();
    }
    let mut v: i64 = 0;
    for &c in digits {
        let d = match c {
            b'0'..=b'9' => u32::from(c - b'0'),
            b'a'..=b'z' => u32::from(c - b'a') + 10,
            b'A'..=b'Z' if base <= 36 => u32::from(c - b'A') + 10,
            b'A'..=b'Z' => u32::from(c - b'A') + 36,
            b'@' => 62,
            b'_' => 63,
            _ => return bad(),
        };
        if d >= base {
            return bad();
        }
        v = v.wrapping_mul(i64::from(base)).wrapping_add(i64::from(d));
    }
    Ok(v)
}

struct Parser<'a> {
    toks: &'a [Tok],
    starts: &'a [usize],
    i: usize,
    text: &'a [u8],
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.i)
    }

    fn peek_op(&self) -> Option<&'static str> {
        match self.peek() {
            Some(Tok::Op(o)) => Some(o),
            _ => None,
        }
    }

    fn syntax<T>(&self) -> Result<T> {
        let rest = match self.peek() {
            // The input ended where an operand was wanted: bash names
            // the expression (blanks before it dropped) and the text from
            // the last token read.
            None => {
                let last = self.starts.last().copied().unwrap_or(0);
                return err(format!(
                    "{}: syntax error: operand expected (error token is \"{}\")",
                    String::from_utf8_lossy(skip_blanks(self.text)),
                    String::from_utf8_lossy(&self.text[last..])
                ));
            }
            // An assignment operator after what is not a variable.
            Some(Tok::Op(o))
                if matches!(
                    *o,
                    "=" | "*=" | "/=" | "%=" | "+=" | "-=" | "<<=" | ">>=" | "&=" | "^=" | "|="
                ) =>
            {
                let at = self.starts.get(self.i).copied().unwrap_or(0);
                return err(format!(
                    "{}: attempted assignment to non-variable (error token is \"{}\")",
                    String::from_utf8_lossy(skip_blanks(self.text)),
                    String::from_utf8_lossy(&self.text[at..])
                ));
            }
            Some(_) => {
                let at = self.starts.get(self.i).copied().unwrap_or(0);
                String::from_utf8_lossy(&self.text[at..]).into_owned()
            }
        };
        err(format!(
            "{}: syntax error in expression (error token is \"{rest}\")",
            String::from_utf8_lossy(skip_blanks(self.text))
        ))
    }

    /// Where the current token starts, or at the end the last one.
    fn token_at(&self) -> usize {
        self.starts
            .get(self.i)
            .or(self.starts.last())
            .copied()
            .unwrap_or(0)
    }

    /// `what` with the text from the current token (or, at the end, the
    /// last one), as bash's evalerror words it.
    fn said<T>(&self, what: &str) -> Result<T> {
        let at = self
            .starts
            .get(self.i)
            .or(self.starts.last())
            .copied()
            .unwrap_or(0);
        err(format!(
            "{}: {what} (error token is \"{}\")",
            String::from_utf8_lossy(skip_blanks(self.text)),
            String::from_utf8_lossy(&self.text[at..])
        ))
    }

    fn comma(&mut self) -> Result<Expr> {
        let mut e = self.assign()?;
        while self.peek_op() == Some(",") {
            self.i += 1;
            let r = self.assign()?;
            e = Expr::Comma(Box::new(e), Box::new(r));
        }
        Ok(e)
    }

    fn assign(&mut self) -> Result<Expr> {
        if let (Some(Tok::Name(n)), Some(Tok::Op(op))) =
            (self.toks.get(self.i), self.toks.get(self.i + 1))
            && matches!(
                *op,
                "=" | "*=" | "/=" | "%=" | "+=" | "-=" | "<<=" | ">>=" | "&=" | "^=" | "|="
            )
        {
            let name = n.clone();
            self.i += 2;
            let rhs = self.assign()?;
            // A fault in `x /= 0` names the last token read (bash).
            return Ok(Expr::Assign(op, name, Box::new(rhs), self.token_at()));
        }
        self.cond()
    }

    fn cond(&mut self) -> Result<Expr> {
        let c = self.binary(0)?;
        if self.peek_op() == Some("?") {
            self.i += 1;
            if matches!(self.peek_op(), Some(":")) || self.peek().is_none() {
                return self.said("expression expected");
            }
            let a = self.comma()?;
            if self.peek_op() != Some(":") {
                // bash's token: the text from the last one read.
                let at = self
                    .starts
                    .get(self.i.saturating_sub(1))
                    .copied()
                    .unwrap_or(0);
                return err(format!(
                    "{}: `:' expected for conditional expression (error token is \"{}\")",
                    String::from_utf8_lossy(skip_blanks(self.text)),
                    String::from_utf8_lossy(&self.text[at..])
                ));
            }
            self.i += 1;
            if self.peek().is_none() {
                return self.said("expression expected");
            }
            // The branch after `:` is a conditional, not an assignment
            // (bash: `1 ? 2 : x+=2` assigns to no variable).
            let b = self.cond()?;
            return Ok(Expr::Cond(Box::new(c), Box::new(a), Box::new(b)));
        }
        Ok(c)
    }

    fn binary(&mut self, min: u8) -> Result<Expr> {
        let mut lhs = self.unary()?;
        while let Some(op) = self.peek_op() {
            let Some(prec) = precedence(op) else { break };
            if prec < min {
                break;
            }
            self.i += 1;
            let at = self.token_at();
            // `**` is right-associative.
            let next = if op == "**" { prec } else { prec + 1 };
            let rhs = self.binary(next)?;
            lhs = Expr::Binary(op, Box::new(lhs), Box::new(rhs), at);
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Expr> {
        match self.peek_op() {
            Some(op @ ("++" | "--")) => {
                if let Some(Tok::Name(n)) = self.toks.get(self.i + 1) {
                    let name = n.clone();
                    self.i += 2;
                    return Ok(Expr::Step {
                        name,
                        delta: if op == "++" { 1 } else { -1 },
                        prefix: true,
                    });
                }
                // `--5` is minus minus five.
                self.i += 1;
                let inner = self.unary()?;
                let sign = if op == "++" { "+" } else { "-" };
                Ok(Expr::Unary(
                    sign,
                    Box::new(Expr::Unary(sign, Box::new(inner))),
                ))
            }
            Some(op @ ("+" | "-" | "!" | "~")) => {
                self.i += 1;
                let inner = self.unary()?;
                Ok(Expr::Unary(op, Box::new(inner)))
            }
            _ => self.postfix(),
        }
    }

    fn postfix(&mut self) -> Result<Expr> {
        let e = self.primary()?;
        if let Expr::Var(name) = &e
            && let Some(op @ ("++" | "--")) = self.peek_op()
        {
            let name = name.clone();
            self.i += 1;
            return Ok(Expr::Step {
                name,
                delta: if op == "++" { 1 } else { -1 },
                prefix: false,
            });
        }
        Ok(e)
    }

    fn primary(&mut self) -> Result<Expr> {
        match self.peek().cloned() {
            Some(Tok::Num(n)) => {
                self.i += 1;
                Ok(Expr::Num(n))
            }
            Some(Tok::Name(n)) => {
                self.i += 1;
                Ok(Expr::Var(n))
            }
            Some(Tok::Op("(")) => {
                self.i += 1;
                let e = self.comma()?;
                if self.peek().is_none() {
                    let at = self.starts.last().copied().unwrap_or(0);
                    return err(format!(
                        "{}: missing `)' (error token is \"{}\")",
                        String::from_utf8_lossy(skip_blanks(self.text)),
                        String::from_utf8_lossy(&self.text[at..])
                    ));
                }
                if self.peek_op() != Some(")") {
                    return self.syntax();
                }
                self.i += 1;
                Ok(e)
            }
            // An operator where an operand goes (`%`, `4 + * 3`).
            Some(Tok::Op(_)) => {
                let at = self.starts.get(self.i).copied().unwrap_or(0);
                err(format!(
                    "{}: syntax error: operand expected (error token is \"{}\")",
                    String::from_utf8_lossy(skip_blanks(self.text)),
                    String::from_utf8_lossy(&self.text[at..])
                ))
            }
            _ => self.syntax(),
        }
    }
}

fn precedence(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "|" => 3,
        "^" => 4,
        "&" => 5,
        "==" | "!=" => 6,
        "<" | ">" | "<=" | ">=" => 7,
        "<<" | ">>" => 8,
        "+" | "-" => 9,
        "*" | "/" | "%" => 10,
        "**" => 11,
        _ => return None,
    })
}

/// How deep a variable's value may refer to other variables.
const MAX_RECURSION: u32 = 100;

struct Eval<'e> {
    env: &'e mut dyn Env,
    depth: u32,
}

impl Eval<'_> {
    fn var(&mut self, name: &[u8]) -> Result<i64> {
        let Some(v) = self.env.get(name)? else {
            return Ok(0);
        };
        let t = String::from_utf8_lossy(&v);
        let trimmed = t.trim_matches([' ', '\t', '\n']);
        if trimmed.is_empty() {
            return Ok(0);
        }
        // A plain decimal number, the usual value, without the parser; not
        // one with a leading 0, which is octal (`08` is an error).
        let digits = trimmed.trim_start_matches(['+', '-']);
        if !(digits.len() > 1 && digits.starts_with('0'))
            && let Ok(n) = trimmed.parse::<i64>()
        {
            return Ok(n);
        }
        // Evaluated as it is: an error shows its trailing blanks (bash).
        let t = t.trim_start_matches([' ', '\t', '\n']);
        if self.depth >= MAX_RECURSION {
            return err(format!(
                "{}: expression recursion level exceeded",
                String::from_utf8_lossy(name)
            ));
        }
        self.depth += 1;
        let r = eval_nested(t.as_bytes(), self);
        self.depth -= 1;
        r
    }

    fn pinned(&mut self, name: &[u8]) -> Result<Vec<u8>> {
        if name.contains(&b'[') {
            self.env.pin(name)
        } else {
            Ok(name.to_vec())
        }
    }

    fn set(&mut self, name: &[u8], v: i64) -> Result<i64> {
        self.env.set(name, v)?;
        Ok(v)
    }

    fn eval(&mut self, e: &Expr, text: &[u8]) -> Result<i64> {
        Ok(match e {
            Expr::Num(n) => *n,
            Expr::Var(n) => self.var(n)?,
            Expr::Unary(op, a) => {
                let a = self.eval(a, text)?;
                match *op {
                    "-" => a.wrapping_neg(),
                    "+" => a,
                    "!" => i64::from(a == 0),
                    _ => !a,
                }
            }
            Expr::Step {
                name,
                delta,
                prefix,
            } => {
                let name = &self.pinned(name)?;
                let old = self.var(name)?;
                let new = old.wrapping_add(*delta);
                self.set(name, new)?;
                if *prefix { new } else { old }
            }
            Expr::Binary(op, a, b, at) => match *op {
                "&&" => i64::from(self.eval(a, text)? != 0 && self.eval(b, text)? != 0),
                "||" => i64::from(self.eval(a, text)? != 0 || self.eval(b, text)? != 0),
                op => {
                    let a = self.eval(a, text)?;
                    let b = self.eval(b, text)?;
                    apply(op, a, b).map_err(|e| e.at(text, *at))?
                }
            },
            Expr::Assign(op, name, rhs, at) => {
                let r = self.eval(rhs, text)?;
                let name = &if *op == "=" {
                    name.clone()
                } else {
                    self.pinned(name)?
                };
                let v = if *op == "=" {
                    r
                } else {
                    let old = self.var(name)?;
                    apply(&op[..op.len() - 1], old, r).map_err(|e| e.at(text, *at))?
                };
                self.set(name, v)?
            }
            Expr::Cond(c, a, b) => {
                if self.eval(c, text)? != 0 {
                    self.eval(a, text)?
                } else {
                    self.eval(b, text)?
                }
            }
            Expr::Comma(a, b) => {
                self.eval(a, text)?;
                self.eval(b, text)?
            }
        })
    }
}

fn apply(op: &str, a: i64, b: i64) -> Result<i64> {
    Ok(match op {
        "+" => a.wrapping_add(b),
        "-" => a.wrapping_sub(b),
        "*" => a.wrapping_mul(b),
        "/" | "%" => {
            if b == 0 {
                return err("division by 0");
            }
            if op == "/" {
                a.wrapping_div(b)
            } else {
                a.wrapping_rem(b)
            }
        }
        "**" => {
            if b < 0 {
                return err("exponent less than 0");
            }
            let mut r: i64 = 1;
            let mut base = a;
            let mut e = b as u64;
            while e > 0 {
                if e & 1 == 1 {
                    r = r.wrapping_mul(base);
                }
                base = base.wrapping_mul(base);
                e >>= 1;
            }
            r
        }
        "<<" => a.wrapping_shl((b & 63) as u32),
        ">>" => a.wrapping_shr((b & 63) as u32),
        "<" => i64::from(a < b),
        ">" => i64::from(a > b),
        "<=" => i64::from(a <= b),
        ">=" => i64::from(a >= b),
        "==" => i64::from(a == b),
        "!=" => i64::from(a != b),
        "&" => a & b,
        "^" => a ^ b,
        "|" => a | b,
        _ => return err(format!("unknown operator {op}")),
    })
}

fn eval_nested(text: &[u8], ev: &mut Eval<'_>) -> Result<i64> {
    let (toks, starts) = lex(text)?;
    if toks.is_empty() {
        return Ok(0);
    }
    let mut p = Parser {
        toks: &toks,
        starts: &starts,
        i: 0,
        text,
    };
    let e = p.comma()?;
    if p.i < toks.len() {
        return p.syntax();
    }
    // bash names the expression before a fault found while evaluating.
    ev.eval(&e, text).map_err(|mut e| {
        if e.message.starts_with("division by 0") || e.message.starts_with("exponent less than 0") {
            e.message = format!(
                "{}: {}",
                String::from_utf8_lossy(skip_blanks(text)),
                e.message
            );
        }
        e
    })
}

thread_local! {
    /// Evaluations under way on this thread: one may start another through
    /// a subscript (`x='y[x]'; $((x))`), which [`Eval`]'s depth does not
    /// see.
    static NESTED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Evaluates an (already expanded) arithmetic expression. An empty one is 0.
pub fn eval(text: &[u8], env: &mut dyn Env) -> Result<i64> {
    let nested = NESTED.get();
    if nested >= MAX_RECURSION {
        return err(format!(
            "{}: expression recursion level exceeded",
            String::from_utf8_lossy(skip_blanks(text))
        ));
    }
    NESTED.set(nested + 1);
    let mut ev = Eval { env, depth: 0 };
    let r = eval_nested(text, &mut ev);
    NESTED.set(nested);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[derive(Default)]
    struct Map(HashMap<Vec<u8>, Vec<u8>>);

    impl Env for Map {
        fn get(&mut self, name: &[u8]) -> Result<Option<Vec<u8>>> {
            Ok(self.0.get(name).cloned())
        }
        fn set(&mut self, name: &[u8], value: i64) -> Result<()> {
            self.0.insert(name.to_vec(), value.to_string().into_bytes());
            Ok(())
        }
    }

    fn ev(s: &str) -> i64 {
        eval(s.as_bytes(), &mut Map::default()).unwrap()
    }

    #[test]
    fn operators() {
        assert_eq!(ev("1 + 2 * 3"), 7);
        assert_eq!(ev("(1 + 2) * 3"), 9);
        assert_eq!(ev("2 ** 3 ** 2"), 512);
        assert_eq!(ev("-2 ** 2"), 4);
        assert_eq!(ev("7 / 2 + 7 % 2"), 4);
        assert_eq!(ev("1 << 4 | 1"), 17);
        assert_eq!(ev("!0 && ~0"), 1);
        assert_eq!(ev("0 ? 1 : 2"), 2);
        assert_eq!(ev("1, 2"), 2);
        assert_eq!(ev("0x10 + 010 + 2#101"), 16 + 8 + 5);
        assert_eq!(ev(""), 0);
        assert_eq!(ev("--5"), 5);
    }

    #[test]
    fn variables_and_assignment() {
        let mut m = Map::default();
        m.0.insert(b"x".to_vec(), b"5".to_vec());
        m.0.insert(b"e".to_vec(), b"x + 1".to_vec());
        assert_eq!(eval(b"x++ + ++x", &mut m).unwrap(), 12);
        assert_eq!(m.0[&b"x".to_vec()], b"7");
        assert_eq!(eval(b"e * 2", &mut m).unwrap(), 16);
        assert_eq!(eval(b"y += 3, y *= 2", &mut m).unwrap(), 6);
        assert_eq!(eval(b"0 && (z = 1)", &mut m).unwrap(), 0);
        assert!(!m.0.contains_key(b"z".as_slice()), "short-circuit skips it");
    }

    #[test]
    fn errors() {
        assert!(eval(b"1 / 0", &mut Map::default()).is_err());
        assert!(eval(b"1 +", &mut Map::default()).is_err());
        assert!(eval(b"(1", &mut Map::default()).is_err());
        assert!(eval(b"08", &mut Map::default()).is_err());
    }
}
