//! rush: the parser, the printer, arithmetic, patterns and braces, on any
//! bytes.

use rush::ast::{Command, Compound, Function};
use rush::parse::{ParseError, parse};
use std::collections::HashMap;

fn parsed(text: &[u8]) -> Result<rush::ast::List, ParseError> {
    parse(text, Default::default())
}

/// Any bytes parse to a tree or an error: no panic, no hang, and deep
/// nesting is an error, not a stack overflow.
pub fn rush_parse(data: &[u8]) {
    let _ = parsed(data);
}

/// Whether parsing `text` closes a here-document at the end of the input
/// (the parser warns of it, as bash does).
fn ended_by_eof(text: &[u8]) -> bool {
    let mut src = rush::parse::Text;
    let mut p = rush::parse::Parser::new(text, &mut src, Default::default());
    let _ = p.program();
    p.take_warnings()
        .iter()
        .any(|(_, w)| w.contains("delimited by end-of-file"))
}

/// The text `declare -f` prints for a function whose body is `list`.
fn printed(list: rush::ast::List) -> Vec<u8> {
    rush::unparse::function(&Function {
        name: b"f".to_vec(),
        body: Compound::Brace(list),
        redirects: Vec::new(),
        line: 1,
        body_line: 1,
        end_line: 1,
    })
}

/// What parses, printed as `declare -f` prints it, parses again, and
/// prints the same: the printer's text means the tree it came from.
pub fn rush_unparse(data: &[u8]) {
    let Ok(list) = parsed(data) else { return };
    if list.items.is_empty() {
        // No command: a function needs one (`f () { }` is not shell).
        return;
    }
    if ended_by_eof(data) || data.ends_with(b"\\") && contains(data, b"<<") {
        // A here-document that the end of the input closes: printed with
        // its delimiter after it, it reads back otherwise when its last
        // line, or its delimiter, ends in a backslash (which joins the next
        // line) or its delimiter spans lines (bash prints the same texts).
        // Known, in fuzz/README.md.
        return;
    }
    if contains(data, b"$[") {
        // bash's old `$[expr]`, which rush prints as `$((expr))`: text that
        // `$[` reads as it is (a lone quote) does not read back inside
        // `$((…))`. Known, in fuzz/README.md.
        return;
    }
    if contains(data, b"!") && format!("{list:?}").contains("assigns: [], words: [], redirects: []")
    {
        // `! !`: an even number of bangs and no command, which bash prints
        // as nothing (so does rush), and which does not read back where a
        // command must stand (`if ! !; then` prints `if ; then`). Known,
        // in fuzz/README.md.
        return;
    }
    if contains(data, b"${$'") && format!("{list:?}").contains("BadSubst") {
        // A bad substitution (refused when it runs) whose name is written
        // `$'…'` in double quotes: bash decodes the name as it reads and
        // then matches quotes in the decoded text, nested or not; rush
        // follows it only where the `${…}` is not nested. Known, in
        // fuzz/README.md.
        return;
    }
    let once = printed(list);
    if contains(&once, b"coproc COPROC ") {
        // bash prints `coproc cat` as `coproc COPROC cat` (so does rush,
        // to print what bash prints), which reads back as the command
        // `COPROC cat`: a known difference, on the list in fuzz/README.md.
        return;
    }
    let again = match parsed(&once) {
        Ok(l) => l,
        // Text that reads back in neither shell, printed as bash prints
        // it: known, in fuzz/README.md.
        Err(_) if as_bash_prints(data) => return,
        Err(e) => panic!(
            "the printed text does not parse ({}):\n{}",
            e.message,
            String::from_utf8_lossy(&once)
        ),
    };
    let [item] = &again.items[..] else {
        panic!(
            "the printed text is not one command:\n{}",
            String::from_utf8_lossy(&once)
        );
    };
    let [Command::Function(f)] = &item.and_or.first.commands[..] else {
        panic!(
            "the printed text is not a function:\n{}",
            String::from_utf8_lossy(&once)
        );
    };
    let twice = rush::unparse::function(f);
    assert!(
        once == twice || as_bash_prints(data),
        "printed twice, the text changed:\n{}\n---\n{}",
        String::from_utf8_lossy(&once),
        String::from_utf8_lossy(&twice)
    );
}

/// Whether bash's `declare -f`, given `data` as a function's body, prints
/// what rush prints for it. The function reaches bash through the
/// environment, which bash reads as one definition and nothing else, so
/// no input runs in bash.
fn as_bash_prints(data: &[u8]) -> bool {
    let mut def = b"f() {\n".to_vec();
    def.extend_from_slice(data);
    def.extend_from_slice(b"\n}");
    let Ok(list) = parsed(&def) else {
        return false;
    };
    let [item] = &list.items[..] else {
        return false;
    };
    let [Command::Function(f)] = &item.and_or.first.commands[..] else {
        return false;
    };
    let mut ours = rush::unparse::function(f);
    ours.push(b'\n');
    if def.contains(&0) {
        return false;
    }
    let body = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(&def[1..]);
    std::process::Command::new("bash")
        .args(["--norc", "--noprofile", "-c", "declare -f f"])
        .env("BASH_FUNC_f%%", body)
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .is_ok_and(|o| o.stdout == ours)
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Variables for arithmetic: a few set, one that names itself (bash stops
/// such a loop with "expression recursion level exceeded").
struct Vars(HashMap<Vec<u8>, Vec<u8>>);

impl rush::arith::Env for Vars {
    fn get(&mut self, name: &[u8]) -> rush::arith::Result<Option<Vec<u8>>> {
        Ok(self.0.get(name).cloned())
    }

    fn set(&mut self, name: &[u8], value: i64) -> rush::arith::Result<()> {
        self.0.insert(name.to_vec(), value.to_string().into_bytes());
        Ok(())
    }
}

/// Any arithmetic expression gives a value or an error: no panic on
/// overflow, division by zero, shifts, bases, or a variable that refers
/// to itself.
pub fn rush_arith(data: &[u8]) {
    let mut vars = Vars(HashMap::from([
        (b"x".to_vec(), b"3".to_vec()),
        (b"y".to_vec(), b"x+1".to_vec()),
        (b"self".to_vec(), b"self+1".to_vec()),
        (b"big".to_vec(), b"9223372036854775807".to_vec()),
    ]));
    let _ = rush::arith::eval(data, &mut vars);
}

/// A pattern and a string (the first byte chooses extglob and nocase;
/// then the pattern, a NUL, the string): matching ends, whatever the
/// pattern (no exponential backtracking: libFuzzer's timeout bounds each
/// input).
pub fn rush_pattern(data: &[u8]) {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    let (pat, subject) = match rest.iter().position(|&b| b == 0) {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => (rest, &b""[..]),
    };
    let quoted = vec![false; pat.len()];
    let p = rush::pattern::Pattern::compile_with(pat, &quoted, flags & 1 != 0, flags & 2 != 0);
    let _ = p.matches(subject);
    let _ = p.matches_name(subject, flags & 4 != 0);
    let _ = p.literal();
}

/// Every word of the text, brace-expanded: no panic, and the expansion
/// stays bounded.
pub fn rush_brace(data: &[u8]) {
    let Ok(words) = rush::parse::words(data) else {
        return;
    };
    // Too many words is an error, not a crash or an OOM. The limits are
    // rush's divided by 64 and shared by the input's words (the same code,
    // at a cost that suits a fuzzer under AddressSanitizer).
    let (mut words_left, mut bytes_left) =
        (rush::brace::MAX_WORDS / 64, rush::brace::MAX_BYTES / 64);
    for w in &words {
        if rush::brace::may_expand(w) {
            let Ok(made) = rush::brace::expand_within(w, words_left, bytes_left) else {
                return;
            };
            words_left = words_left.saturating_sub(made.len());
            bytes_left = bytes_left
                .saturating_sub(made.iter().map(|w| w.unquoted_text().len().max(1)).sum());
        }
    }
}
