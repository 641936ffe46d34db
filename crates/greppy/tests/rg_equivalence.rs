//! greppy's answers equal ripgrep's on a corpus made here: the same lines,
//! the same files (.gitignore, hidden and binary files), the same counts
//! and the same exit status; both when greppy scans and when its daemon
//! answers from the index.

mod common;

use common::Daemon;
use std::path::Path;
use std::process::Command;

/// A small tree with what rg treats specially.
fn corpus(root: &Path) {
    let w = |p: &str, text: &[u8]| {
        let p = root.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    // .gitignore applies inside a git repository, as in rg.
    std::fs::create_dir_all(root.join(".git")).unwrap();
    w(".gitignore", b"target/\n*.log\n");
    w("src/main.rs", b"fn main() {\n    let retry_policy = RetryPolicy::new(3);\n    println!(\"hello world\");\n}\n");
    w("src/lib.rs", b"pub struct RetryPolicy { attempts: u32 }\n\nimpl RetryPolicy {\n    pub fn new(n: u32) -> Self { Self { attempts: n } }\n}\n// TODO: backoff\n");
    w(
        "src/util/mod.rs",
        b"pub fn helper() -> u32 { 42 }\n#[test]\nfn t() { assert_eq!(helper(), 42); }\n",
    );
    w("py/app.py", b"def retry(policy):\n    return policy\n\nclass Handler:\n    pass\n# TODO: retry policy\n");
    w(
        "docs/notes.md",
        b"The retry policy is set in src/lib.rs.\nHELLO World\nhello-world\n",
    );
    w(
        "target/debug/out.rs",
        b"fn main() { ignored_by_gitignore(); }\n",
    );
    w("build.log", b"retry policy log line\n");
    w(".hidden/secret.rs", b"fn hidden_fn() {}\n");
    w("data/blob.bin", b"retry\x00policy binary\n");
    // NUL bytes past the first page, and past the first 64 KiB block: rg
    // reports the lines of the blocks before the one with the NUL.
    let mut late = "retry late line\n".repeat(400).into_bytes();
    late.extend_from_slice(b"\x00retry after\n");
    w("data/late_nul.bin", &late);
    let mut later = "retry later line\n".repeat(6000).into_bytes();
    later.extend_from_slice(b"\x00retry after\n");
    w("data/later_nul.bin", &later);
    w("data/latin1.txt", b"caf\xe9 retry\n");
    // The Kelvin sign folds to `k`: a case-insensitive search for
    // `kelvin_scale` (`-i`, or `-S` with no capital) finds this line.
    w(
        "data/kelvin.rs",
        "let \u{212A}elvin_scale = 1;\n".as_bytes(),
    );
    // Every trigram of `abcdef` (and the byte after each), never the word:
    // a candidate the command line reads and finds nothing in.
    w("data/near.txt", b"abcdZ\nbcdeZ\ncdefZ\n");
    // Byte order marks: rg decodes UTF-16 and drops a UTF-8 BOM.
    w("data/bom8.txt", b"\xef\xbb\xbfretry with a UTF-8 BOM\n");
    let utf16: Vec<u8> = "\u{feff}retry in UTF-16\n"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    w("data/utf16.txt", &utf16);
    // A file of many blocks with matches in a few of them.
    let mut blocks = String::new();
    for n in 0..12_000 {
        blocks.push_str(&format!("filler {n}\n"));
        if n % 2_500 == 7 {
            blocks.push_str(&format!("retry in block {n}\n"));
        }
    }
    w("data/blocks.txt", blocks.as_bytes());
    // A file larger than the daemon reads whole (4 MiB).
    let mut big = "filler line\n".repeat(400_000).into_bytes();
    big.extend_from_slice(b"retry at the end of a big file\n");
    w("data/big.txt", &big);
    w(
        "data/a_first.txt",
        b"filler line, a file that sorts first\n",
    );
    // A file of blocks with CRLF lines, whose last line matches and has no
    // terminator.
    let mut crlf = "padding\r\n".repeat(5_000);
    crlf.push_str("retry in a CRLF line\r\n");
    crlf.push_str(&"padding\r\n".repeat(5_000));
    crlf.push_str("retry with no line end");
    w("data/crlf_blocks.txt", crlf.as_bytes());
    w("data/crlf.txt", b"retry line one\r\nsecond line\r\n");
    // A name that is not UTF-8, and links rg does not follow: a loop, and
    // one to a folder outside the tree.
    let latin1 = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(b"lat\xe9n.rs");
    std::fs::write(
        root.join("src").join(latin1),
        b"fn latin() { RetryPolicy::new(2); }\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("..", root.join("src/loop")).unwrap();
    std::os::unix::fs::symlink("/usr/share", root.join("outside")).unwrap();
    let odd = std::ffi::OsStr::new("odd\u{e9}name.rs");
    std::fs::write(
        root.join("src").join(odd),
        b"fn odd() { RetryPolicy::new(1); }\n",
    )
    .unwrap();
}

/// Equal answers, or a panic that shows only the lines that differ.
fn same(got: &(String, i32), want: &(String, i32), what: &str) {
    if got == want {
        return;
    }
    let set = |t: &str| {
        t.lines()
            .map(str::to_string)
            .collect::<std::collections::BTreeSet<_>>()
    };
    let (g, w) = (set(&got.0), set(&want.0));
    panic!(
        "{what}: exit {} (rg {}); only greppy: {:?}; only rg: {:?}",
        got.1,
        want.1,
        g.difference(&w).collect::<Vec<_>>(),
        w.difference(&g).collect::<Vec<_>>()
    );
}

fn run(mut cmd: Command, args: &[&str], dir: &Path) -> (String, i32) {
    let o = cmd.args(args).current_dir(dir).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("comes from a scan"), "{args:?}: {err}");
    let text = String::from_utf8_lossy(&o.stdout);
    let mut lines: Vec<&str> = text.lines().collect();
    // rg prints files in the order its threads finish them.
    lines.sort_unstable();
    (lines.join("\n"), o.status.code().unwrap_or(-1))
}

#[test]
fn answers_equal_ripgreps() {
    assert!(
        Command::new("rg").arg("--version").output().is_ok(),
        "ripgrep (rg) is not installed: apt-get install ripgrep"
    );
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path());
    let daemon = Daemon::start();
    let o = daemon.cmd().arg("index").arg(dir.path()).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let scanning = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_greppy"));
        c.env("GREPPY_NO_DAEMON", "1");
        c
    };
    let cases: &[&[&str]] = &[
        &["retry"],
        &["-n", "retry"],
        &["-i", "-n", "hello world"],
        &["-S", "hello"],
        &["-S", "Hello"],
        &["-S", "-n", "kelvin_scale"],
        &["-i", "-n", "KELVIN_SCALE"],
        // Several patterns; case flags, the last one winning; whole lines.
        &["-n", "-e", "retry", "-e", "hello"],
        &["-F", "-n", "-e", "RetryPolicy::new(", "-e", "fn t()"],
        &["-i", "-s", "-n", "RETRY"],
        &["-s", "-i", "-c", "RETRY"],
        &["-x", "-n", "retry policy log line"],
        &["-F", "-x", "-c", "retry policy log line"],
        &["-w", "-x", "-n", "retry"],
        // Only the matches; counts of matches.
        &["-o", "-n", r"retry\w*"],
        &["-o", "-i", "RETRY [a-z]+"],
        &["--count-matches", "retry"],
        &["-c", "-o", "e"],
        // rg's test harness passes `--path-separator /` on every call;
        // a separator of two bytes is rg's error (status 2).
        &["--path-separator", "/", "-n", "retry"],
        &["--path-separator", "//", "retry"],
        // How deep the walk goes (scanned).
        &["--max-depth", "1", "-l", "fn"],
        &["--maxdepth", "2", "-c", "retry"],
        &["--files", "--max-depth", "1"],
        // Hints that change nothing printed.
        &["--no-mmap", "-j", "1", "-n", "retry"],
        &["--mmap", "--threads", "2", "-c", "retry"],
        // The files a search would read.
        &["--files"],
        &["--files", "-t", "py"],
        &["--files", "-g", "*.rs", "--hidden"],
        &["--files", "--sort", "path"],
        &["-n", "--sort", "path", "retry"],
        &["-l", "--sort", "none", "fn"],
        // Scanned: inverted, hidden files, across lines.
        &["-v", "-c", "retry"],
        &["-v", "-n", "-g", "*.py", "def"],
        &["--hidden", "-l", "hidden_fn"],
        &["-.", "-n", "fn"],
        &["-U", "-n", r"fn main\(\) \{\n\s*let"],
        &["-U", "-c", r"^\s*let"],
        &["-w", "-n", "retry"],
        &["-F", "-n", "RetryPolicy::new("],
        &["-n", r"fn\s+\w+\("],
        &["-n", r"^\s*(pub )?fn"],
        &["-n", "TODO|FIXME"],
        &["-c", "retry"],
        &["-l", "RetryPolicy"],
        // Paths and counts from a large file's regions (paths stop at the
        // first match).
        &["-l", "retry in block"],
        &["-c", "retry in block"],
        &["-n", "-m", "1", "fn"],
        // `-m 0` matches nothing (the daemon took 0 for no limit).
        &["-n", "-m", "0", "fn"],
        &["-c", "-m", "0", "retry"],
        // Lines alone (the command line then reads only a large file's
        // regions), with a per-file cap and with colour.
        &["-m", "1", "retry"],
        &["--color", "always", "retry"],
        &["--color", "always", "-n", "-c", "retry"],
        &["--color", "always", "-l", "retry"],
        // An output larger than a frame (12 MB from one file, after another
        // file's).
        &["-n", "filler line"],
        &["-n", "-C", "1", "helper"],
        &["-n", "-A", "1", "-B", "2", "retry"],
        &["-n", "-g", "*.rs", "fn"],
        &["-n", "-g", "!*.rs", "retry"],
        &["-n", "-t", "py", "retry"],
        &["-n", "ignored_by_gitignore"],
        &["-n", "hidden_fn"],
        &["-n", "policy binary"],
        &["-n", "caf"],
        &["-n", "second line$"],
        &["-n", "nothing_matches_this"],
        &["-n", "abcdef"],
        &["-n", "retry", "src", "docs/notes.md"],
        &["-n", "RetryPolicy", "src/lib.rs"],
        &["-n", "x", "no_such_path"],
        &["-n", "[unclosed"],
        &["--color", "bogus", "x"],
        // Outside the index, by rg's rules: an ignored or hidden folder
        // named, a glob that lets ignored files in.
        &["-n", "ignored", "target"],
        &["-n", "hidden_fn", ".hidden"],
        &["-n", "-g", "*.log", "retry"],
        &["-n", "-g", "!src/", "retry"],
        &["-n", "-g", "!*.md", "-t", "rust", "retry"],
        &["-n", "-g", "!util", "helper", "src"],
        &["-n", "RetryPolicy", "src", "py"],
        // rg's other flags, family by family (see `greppy::full`).
        // Printing: replacements, trimming, columns, vimgrep, separators.
        &["-n", "-r", "RETRY", "retry"],
        &["-o", "-r", "$1!", r"(re)try"],
        &["--replace", "${w}", "-n", r"(?P<w>\w+)_policy"],
        &["--trim", "-n", "retry_policy"],
        &["--column", "retry"],
        &["--no-column", "-n", "retry"],
        &["--vimgrep", "RetryPolicy"],
        &["-0", "-l", "--sort", "path", "retry"],
        &["--null", "-c", "--sort", "path", "retry"],
        &["-H", "-n", "RetryPolicy", "src/lib.rs"],
        &["-I", "-n", "retry"],
        &["--no-filename", "-c", "retry"],
        &["--heading", "-n", "retry"],
        &["--no-heading", "-n", "fn"],
        &["-q", "retry"],
        &["-q", "nothing_matches_this"],
        &["-n", "-A", "1", "--context-separator", "==", "retry"],
        &["-n", "-C", "1", "--no-context-separator", "retry"],
        &["-n", "--field-match-separator", "|", "retry"],
        &["-n", "-B", "1", "--field-context-separator", "#", "policy"],
        &["-M", "20", "-n", "retry"],
        &["-M", "20", "--max-columns-preview", "retry"],
        &["-b", "-n", "RetryPolicy"],
        &["-b", "-o", "RetryPolicy"],
        &["--passthru", "helper", "src/util/mod.rs"],
        &["-c", "--include-zero", "RetryPolicy"],
        &["--files-without-match", "retry"],
        &[
            "--color",
            "always",
            "--colors",
            "match:fg:green",
            "-n",
            "retry",
        ],
        &["--crlf", "-n", "line one$"],
        &["--null-data", "-c", "--sort", "path", "retry"],
        // Patterns from a file; engines' limits.
        &["-f", "py/app.py", "-c"],
        &["--dfa-size-limit", "10M", "-c", "retry"],
        &["--regex-size-limit", "1K", "-c", "retry"],
        &["--no-unicode", "-c", r"\w+"],
        &["-U", "--multiline-dotall", "-c", "fn main.*hello"],
        // PCRE2: chosen, chosen for what the default engine cannot
        // compile, and its errors.
        &["-P", "-n", r"(?<=def )retry"],
        &["-P", "-c", r"retry(?= policy)"],
        &["--pcre2", "-w", "-i", "-n", "-g", "!*.bin", "RETRY"],
        &["--auto-hybrid-regex", "-g", "*.py", "-n", r"(?<=def )retry"],
        &["--engine", "auto", "-c", "retry"],
        &["-P", "--no-pcre2", "-c", "retry"],
        &["-P", "(?<"],
        // Binary files: as text, or searched and reported.
        &["-a", "-n", "retry after"],
        &["--binary", "-c", "retry"],
        &["--text", "-c", "policy binary"],
        // The walk: types, globs, ignore files, limits, links.
        &["-T", "rust", "-l", "retry"],
        &["--type-add", "notes:*.md", "-t", "notes", "-n", "retry"],
        &["--iglob", "*.PY", "-n", "retry"],
        &["--glob-case-insensitive", "-g", "*.MD", "-c", "retry"],
        &["--no-ignore", "-l", "retry"],
        &["--no-ignore-vcs", "-l", "ignored_by_gitignore"],
        &["-u", "-l", "retry"],
        &["-uu", "-l", "fn"],
        &["-uuu", "-c", "retry"],
        &["--max-filesize", "1K", "-l", "retry"],
        &["--ignore-file", "py/app.py", "-l", "retry"],
        &["--sort", "modified", "-l", "retry"],
        &["--sortr", "path", "-n", "retry"],
        &["-E", "latin1", "-n", "caf"],
        &["-E", "none", "-c", "retry"],
        &["-z", "-c", "retry"],
        &["--files", "-0", "--sort", "path"],
        &["--files", "-u"],
        // An editor's walk flags (VS Code's workspace search, but for
        // `--follow`: this tree's links lead out of it), answered from the
        // index and the hidden files kept beside it; `.git` let in, or a
        // subfolder whose parent has a `.gitignore`, walked.
        &[
            "--hidden",
            "--ignore-case",
            "-g",
            "!**/.git",
            "--max-filesize",
            "1000000",
            "--no-ignore-parent",
            "--crlf",
            "--auto-hybrid-regex",
            "--no-config",
            "--no-ignore-global",
            "-n",
            "--before-context",
            "1",
            "--regexp",
            "hidden_fn|retry",
        ],
        &["--hidden", "-g", "!.git", "-l", "fn"],
        &["--hidden", "-c", "retry"],
        &["--hidden", "--no-ignore-parent", "-n", "retry", "src"],
        &["--max-filesize", "100", "--no-ignore-global", "-l", "retry"],
        // rg's `--no-` forms: the last one given wins.
        &["-F", "--no-fixed-strings", "-c", "re.ry"],
        &["--hidden", "--no-hidden", "-l", "hidden_fn"],
        &["--json", "--no-json", "-c", "retry"],
        &["-U", "--no-multiline", "-c", "retry"],
        // rg's errors for bad values.
        &["--colors", "match:fg:nocolor", "x"],
        &["-E", "no-such-encoding", "x"],
        &["--max-filesize", "10Q", "x"],
    ];
    for args in cases {
        let mut a = args.to_vec();
        let named_paths = a
            .iter()
            .skip(1)
            .any(|x| x.contains('/') || *x == "src" || *x == "no_such_path");
        if !named_paths {
            a.push(".");
        }
        let want = run(Command::new("rg"), &a, dir.path());
        let got = run(scanning(), &a, dir.path());
        same(&got, &want, &format!("greppy {a:?}, scanning"));
        let got = run(daemon.cmd(), &a, dir.path());
        same(&got, &want, &format!("greppy {a:?}, from the daemon"));
    }
    // With --sort path rg prints files in path order, as greppy always
    // does: the same bytes, unsorted.
    for args in [
        &["-n", "--sort", "path", "retry", "."][..],
        &["--files", "--sort", "path"][..],
        // A scan (the walk's threads search, and print in path order).
        &["--hidden", "-n", "--sort", "path", "retry", "."][..],
        &["-v", "-c", "--sort", "path", "retry", "docs", "."][..],
    ] {
        let raw = |mut c: Command| {
            c.args(args)
                .current_dir(dir.path())
                .output()
                .unwrap()
                .stdout
        };
        let want = raw(Command::new("rg"));
        assert_eq!(raw(scanning()), want, "{args:?}, scanning");
        assert_eq!(raw(daemon.cmd()), want, "{args:?}, from the daemon");
    }
    // With no path, rg names files without `./`; also in a subfolder.
    for (args, cwd) in [
        (&["-n", "retry"][..], dir.path().to_path_buf()),
        (&["-l", "fn"][..], dir.path().join("src")),
        (&["-c", "-w", "retry"][..], dir.path().join("docs")),
        (&["--files"][..], dir.path().join("src")),
    ] {
        let want = run(Command::new("rg"), args, &cwd);
        same(
            &run(scanning(), args, &cwd),
            &want,
            &format!("{args:?}, scanning"),
        );
        same(
            &run(daemon.cmd(), args, &cwd),
            &want,
            &format!("{args:?}, from the daemon"),
        );
    }
}

/// A reader that stops early (`greppy x | head`) ends the search quietly,
/// as it ends rg's: exit 0 and nothing on stderr, scanning and through the
/// daemon (which prints, and is cancelled when the command line goes).
#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".git")).unwrap();
    let many = "a matching line\n".repeat(200_000);
    for f in ["a.txt", "b.txt", "c.txt"] {
        std::fs::write(dir.path().join(f), &many).unwrap();
    }
    let daemon = Daemon::start();
    let o = daemon.cmd().arg("index").arg(dir.path()).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let scanning = {
        let mut c = daemon.cmd();
        c.env("GREPPY_NO_DAEMON", "1");
        c
    };
    for (how, mut c) in [("through the daemon", daemon.cmd()), ("scanning", scanning)] {
        let mut child = c
            .args(["-n", "matching", "."])
            .current_dir(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = [0u8; 64];
        let mut out = child.stdout.take().unwrap();
        out.read_exact(&mut first).unwrap();
        drop(out);
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{how}: {err}");
        assert_eq!(err, "", "{how}");
    }
}
