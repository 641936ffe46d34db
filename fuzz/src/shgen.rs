//! Small bash programs from a grammar: quoting, expansions, arrays,
//! redirections and control flow, run by rush and by bash, whose outputs
//! and statuses must agree. Every program ends (loops are bounded), reads
//! nothing, and runs only builtins, in an empty folder of its own.

use std::path::Path;
use std::process::{Command, Stdio};

/// A program's choices, read from bytes: a fuzzer's (each choice one
/// byte, so that a mutation of a byte changes one choice), or a seed's.
/// When the bytes run out every choice is the first, so every input makes
/// a program, and a short one.
#[derive(Debug)]
pub struct Gen {
    data: Vec<u8>,
    pos: usize,
    depth: u32,
}

const NAMES: &[&str] = &["a", "b", "x", "y1", "_z"];
const LITERALS: &[&str] = &[
    "w",
    "two words",
    "",
    "*",
    "a*b",
    "-n",
    "x=y",
    "é",
    "1",
    "42",
    "-3",
    "tab\there",
    "a:b:c",
    "[x]",
    "\\",
    "$",
    "'q'",
    "\"d\"",
];

impl Gen {
    /// The program of a seed: its choices from 4 KiB of the seed's
    /// pseudo-random bytes.
    pub fn new(seed: u64) -> Gen {
        let mut rng = fastrand::Rng::with_seed(seed);
        Gen::from_bytes((0..4096).map(|_| rng.u8(..)).collect())
    }

    pub fn from_bytes(data: Vec<u8>) -> Gen {
        Gen {
            data,
            pos: 0,
            depth: 0,
        }
    }

    /// A number in `range`, from the next bytes (the range's start when
    /// there are none).
    fn int<T: arbitrary::unstructured::Int>(&mut self, range: std::ops::RangeInclusive<T>) -> T {
        let mut u = arbitrary::Unstructured::new(&self.data[self.pos..]);
        let v = u.int_in_range(range.clone()).unwrap_or(*range.start());
        self.pos = self.data.len() - u.len();
        v
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.int(0..=from.len() - 1)]
    }

    fn name(&mut self) -> &'static str {
        self.pick(NAMES)
    }

    /// A literal, quoted one of the ways the shell allows.
    fn literal(&mut self) -> String {
        let s = self.pick(LITERALS);
        match self.int(0u8..=3) {
            0 => format!("'{}'", s.replace('\'', "'\\''")),
            1 => format!("\"{}\"", escape_double(s)),
            2 => format!(
                "$'{}'",
                s.replace('\\', "\\\\")
                    .replace('\'', "\\'")
                    .replace('\t', "\\t")
            ),
            _ => s
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii() {
                        c.to_string()
                    } else {
                        format!("\\{c}")
                    }
                })
                .collect(),
        }
    }

    /// A parameter expansion.
    fn param(&mut self) -> String {
        let n = self.name();
        let w = self.pick(&["w", "x", "*", "?", "a b"]);
        match self.int(0u8..=13) {
            0 => format!("${n}"),
            1 => format!("${{{n}:-{w}}}"),
            2 => format!("${{{n}:+{w}}}"),
            3 => format!("${{#{n}}}"),
            4 => format!("${{{n}#?}}"),
            5 => format!("${{{n}%%{w}}}"),
            6 => format!("${{{n}/w/{w}}}"),
            7 => format!("${{{n}^^}}"),
            8 => format!("${{{n}:1:2}}"),
            9 => "${arr[@]}".into(),
            10 => "${#arr[@]}".into(),
            11 => format!("${{arr[{}]}}", self.int(0u8..=2)),
            12 => "$?".into(),
            _ => "$#".into(),
        }
    }

    fn arith(&mut self) -> String {
        let n = self.name();
        let op = self.pick(&[
            "+", "-", "*", "/", "%", "<<", "&", "|", "^", "==", "<", "&&",
        ]);
        let k = self.int(-3i32..=19);
        match self.int(0u8..=3) {
            0 => format!("$(( {n} {op} {k} ))"),
            1 => format!("$(( ({k} {op} 3) ? {n} : -1 ))"),
            2 => format!("$(( {n} += {} ))", k.max(0)),
            _ => format!("$(( {k} {op} {} ))", self.int(1i32..=8)),
        }
    }

    /// One word: literals, expansions and substitutions, quoted or not.
    fn word(&mut self) -> String {
        let parts = self.int(1usize..=2);
        let mut w = String::new();
        for _ in 0..parts {
            let part = match self.int(0u8..=9) {
                0..=3 => self.literal(),
                4..=5 => self.param(),
                6 => format!("\"{}\"", self.param()),
                7 => self.arith(),
                8 if self.depth < 2 => {
                    self.depth += 1;
                    let inner = self.simple();
                    self.depth -= 1;
                    format!("\"$({inner})\"")
                }
                _ => format!("{{{},{}}}", self.pick(&["p", "q"]), self.pick(&["r", "s"])),
            };
            w.push_str(&part);
        }
        w
    }

    /// A command that prints its words one per line, brackets showing
    /// where each field starts and ends.
    fn simple(&mut self) -> String {
        let n = self.int(0usize..=3);
        let words: Vec<String> = (0..n).map(|_| self.word()).collect();
        match self.int(0u8..=7) {
            0 => format!("{}={}", self.name(), self.word()),
            1 => format!("arr=({})", words.join(" ")),
            2 => format!("arr+=({})", self.word()),
            3 => format!("echo {}", words.join(" ")),
            4 => format!(
                "{} <<< {}",
                "read -r y1 _z; printf '[%s]' \"$y1\" \"$_z\"; echo",
                self.word()
            ),
            5 => format!("test \"{}\" = \"{}\"", self.param(), self.param()),
            6 => format!(
                "[[ \"{}\" == {} ]]",
                self.param(),
                self.pick(&["w*", "*", "?", "a*b", "t*"])
            ),
            _ => format!("printf '<%s>' {}; echo", words.join(" ")),
        }
    }

    /// A command: simple or compound, with a redirection now and then.
    fn command(&mut self) -> String {
        if self.depth >= 3 {
            return self.simple();
        }
        self.depth += 1;
        let c = match self.int(0u8..=11) {
            0 => format!(
                "if {}; then {}; else {}; fi",
                self.simple(),
                self.list(),
                self.list()
            ),
            1 => format!(
                "for {} in {}; do {}; done",
                self.name(),
                self.word(),
                self.list()
            ),
            // A counter of its own at each depth: a loop inside that
            // reset an outer loop's counter would never end.
            2 => {
                let i = format!("i{}", self.depth);
                format!(
                    "{i}=0; while (( {i} < {} )); do {}; {i}=$(({i} + 1)); done",
                    self.int(0u8..=2),
                    self.list()
                )
            }
            3 => format!(
                "case {} in {}) {};; *) {};; esac",
                self.word(),
                self.pick(&["w", "*w*", "a|b", "[0-9]*", "''"]),
                self.list(),
                self.list()
            ),
            4 => format!("f() {{ {}; }}; f {}", self.list(), self.word()),
            5 => format!("( {} )", self.list()),
            6 => format!("{{ {}; }} >/dev/null", self.list()),
            7 => format!("{} | {{ read -r a; echo \"$a\"; }}", self.simple()),
            8 => format!(
                "{} && {} || {}",
                self.simple(),
                self.simple(),
                self.simple()
            ),
            9 => format!("! {}", self.simple()),
            _ => self.simple(),
        };
        self.depth -= 1;
        c
    }

    fn list(&mut self) -> String {
        let n = self.int(1usize..=2);
        (0..n)
            .map(|_| self.command())
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// A whole program: a few variables set, then commands, each line's
    /// status printed.
    pub fn program(&mut self) -> String {
        let mut p = String::from("a='w x'; b=''; x='*'; arr=(one 'two three')\n");
        for _ in 0..self.int(1usize..=4) {
            p.push_str(&self.command());
            p.push_str("; echo \"s=$?\"\n");
        }
        p
    }
}

fn escape_double(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '"' | '\\' | '$' | '`' => format!("\\{c}"),
            c => c.to_string(),
        })
        .collect()
}

/// What a shell did with a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub stdout: String,
    pub status: Option<i32>,
}

/// Runs `program` with `shell -c` in `dir`, stdin empty, stderr dropped
/// (messages are worded differently), in the C locale's UTF-8, for at most
/// 10 s (`timeout -s KILL`: a program that does not end is a finding too,
/// with the status 137).
pub fn run(shell: &Path, program: &str, dir: &Path) -> Outcome {
    let out = Command::new("timeout")
        .args(["-s", "KILL", "10"])
        .arg(shell)
        .arg("-c")
        .arg(program)
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C.UTF-8")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .expect("the shell starts");
    Outcome {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        status: out.status.code(),
    }
}

/// The rush binary next to the test or fuzz binary's folder
/// (`target/<profile>/rush`), or `$RUSH`.
pub fn rush_binary() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("RUSH") {
        return Some(p.into());
    }
    let exe = std::env::current_exe().ok()?;
    exe.ancestors()
        .skip(1)
        .take(3)
        .map(|d| d.join("rush"))
        .find(|p| p.is_file())
}

/// The differential check on a fuzzer's bytes: the program they choose
/// (see [`Gen`]), run by rush (`$RUSH`, or beside this binary) and by
/// `/bin/bash` in an empty folder, must print the same and exit the same.
pub fn rush_vs_bash(data: &[u8]) {
    let rush = rush_binary().expect("rush is built: set RUSH to its path");
    let program = Gen::from_bytes(data.to_vec()).program();
    let dir = tempfile::tempdir().expect("a folder");
    let ours = run(&rush, &program, dir.path());
    let theirs = run(Path::new("/bin/bash"), &program, dir.path());
    assert!(
        ours == theirs,
        "rush and bash differ on:\n{program}--- rush ({:?}):\n{}--- bash ({:?}):\n{}",
        ours.status,
        ours.stdout,
        theirs.status,
        theirs.stdout
    );
}

/// The rush binary for a test: beside it, or built now with `cargo`
/// (a test's `env!("CARGO")`).
pub fn rush_for_test(cargo: &str) -> std::path::PathBuf {
    rush_binary().unwrap_or_else(|| {
        let st = Command::new(cargo)
            .args(["build", "-q", "-p", "rush"])
            .status()
            .expect("cargo runs");
        assert!(st.success(), "cargo build -p rush failed");
        rush_binary().expect("rush is built")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_deterministic_and_varied() {
        let a = Gen::new(7).program();
        assert_eq!(a, Gen::new(7).program());
        let distinct: std::collections::BTreeSet<String> =
            (0..50).map(|s| Gen::new(s).program()).collect();
        assert!(distinct.len() >= 45);
    }
}
