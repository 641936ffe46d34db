//! How rush is started: the flags bash takes, login mode, and the option
//! state bash prints.

mod common;
use common::*;
use std::process::Stdio;

fn run(args: &[&str], home: Option<&std::path::Path>) -> Run {
    let mut c = rush();
    c.args(args).stdin(Stdio::null());
    if let Some(h) = home {
        c.env("HOME", h);
    }
    c.output().unwrap().into()
}

#[test]
fn login_mode_reads_the_profiles_as_bash_does() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join(".profile"), "echo profile; P=1\n").unwrap();
    for args in [
        &["-l", "-c", "echo $P"][..],
        &["-lc", "echo $P"],
        &["--login", "-c", "echo $P"],
    ] {
        let r = run(args, Some(home.path()));
        assert!(r.stdout.ends_with("profile\n1\n"), "{args:?}: {r:?}");
        assert_eq!(r.status, 0);
    }
    // The first of ~/.bash_profile, ~/.bash_login, ~/.profile only.
    std::fs::write(home.path().join(".bash_login"), "echo login\n").unwrap();
    let r = run(
        &["-lc", "shopt -q login_shell && echo yes"],
        Some(home.path()),
    );
    assert!(r.stdout.ends_with("login\nyes\n"), "{r:?}");
    assert!(!r.stdout.contains("profile"), "{r:?}");
    // --noprofile, and no login: nothing is read.
    let r = run(&["-l", "--noprofile", "-c", "echo x"], Some(home.path()));
    assert_eq!(r.stdout, "x\n");
    let r = run(
        &["-c", "shopt -q login_shell || echo no"],
        Some(home.path()),
    );
    assert_eq!(r.stdout, "no\n");
    // An argv[0] that starts with `-` is a login shell (login(1), sshd).
    let r: Run = {
        use std::os::unix::process::CommandExt;
        let mut c = rush();
        c.arg0("-rush")
            .args(["-c", "echo $P"])
            .env("HOME", home.path())
            .stdin(Stdio::null());
        c.output().unwrap().into()
    };
    assert!(r.stdout.ends_with("login\n\n"), "{r:?}");
}

#[test]
fn bash_flags_are_accepted() {
    for (args, out) in [
        (&["--norc", "-c", "echo ok"][..], "ok\n"),
        (&["--noprofile", "--norc", "-c", "echo ok"], "ok\n"),
        (&["--rcfile", "/nonexistent", "-c", "echo ok"], "ok\n"),
        (&["--init-file", "/nonexistent", "-c", "echo ok"], "ok\n"),
        (&["--noediting", "-c", "echo ok"], "ok\n"),
        (
            &["--posix", "-c", "shopt -oq posix && echo posix"],
            "posix\n",
        ),
        (
            &["-O", "extglob", "-c", "shopt -q extglob && echo on"],
            "on\n",
        ),
        (
            &["+O", "sourcepath", "-c", "shopt -q sourcepath || echo off"],
            "off\n",
        ),
        (
            &["-euo", "pipefail", "-c", "echo $SHELLOPTS"],
            "braceexpand:errexit:hashall:interactive-comments:nounset:pipefail\n",
        ),
        (
            &["-Eeuo", "pipefail", "-c", "shopt -oq errtrace && echo E"],
            "E\n",
        ),
        (&["-T", "-c", "shopt -oq functrace && echo T"], "T\n"),
        (
            &["-o", "errtrace", "-o", "functrace", "-c", "echo $-"],
            "hBETc\n",
        ),
    ] {
        let r = run(args, None);
        assert_eq!(
            (r.stdout.as_str(), r.status),
            (out, 0),
            "{args:?}: {}",
            r.stderr
        );
    }
    let r = run(&["--version"], None);
    assert!(r.stdout.starts_with("rush ") && r.status == 0, "{r:?}");
    let r = run(&["--help"], None);
    assert!(r.stdout.contains("--login") && r.status == 0, "{r:?}");
}

#[test]
fn bad_options_are_named() {
    for (args, msg) in [
        (
            &["--bogus", "-c", "true"][..],
            "rush: --bogus: invalid option\n",
        ),
        (&["-Z", "-c", "true"], "rush: -Z: invalid option\n"),
        (
            &["-O", "nosuch", "-c", "true"],
            "rush: nosuch: invalid shell option name\n",
        ),
        (
            &["-o", "nosuch", "-c", "true"],
            "rush: nosuch: invalid option name\n",
        ),
        (
            &["--rcfile"],
            "rush: --rcfile: option requires an argument\n",
        ),
        (&["-O"], "rush: -O: option requires an argument\n"),
    ] {
        let r = run(args, None);
        assert_eq!(r.status, 2, "{args:?}");
        assert!(r.stderr.starts_with(msg), "{args:?}: {:?}", r.stderr);
        assert!(r.stderr.contains("Usage: rush"), "{args:?}");
        assert_eq!(r.stdout, "");
    }
}

/// The options bash has, as bash prints them: sourcing bash's own state
/// snapshot is silent, and rush prints its state in the same form.
#[test]
fn bash_option_state_round_trips() {
    let o = bash()
        .args(["-c", "shopt -p; set +o"])
        .output()
        .expect("bash is not installed: apt-get install bash");
    let state = String::from_utf8(o.stdout).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("state");
    std::fs::write(&file, &state).unwrap();
    let r = run(
        &[
            "-c",
            ". \"$1\"; shopt -p; set +o",
            "sh",
            file.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(r.stderr, "");
    assert_eq!(r.stdout, state);
    // And the same for the variables that list them.
    let script = "echo $SHELLOPTS; echo $BASHOPTS";
    let b = bash().args(["-c", script]).output().unwrap();
    let r = run(&["-c", script], None);
    assert_eq!(r.stdout, String::from_utf8(b.stdout).unwrap());
}

#[test]
fn bash_version_variables() {
    let r = run(
        &[
            "-c",
            "echo $BASH_VERSION ${BASH_VERSINFO[0]} ${BASH_VERSINFO[4]} ${#BASH_VERSINFO[@]}",
        ],
        None,
    );
    assert_eq!(r.stdout, "5.2.0(1)-rush 5 rush 6\n");
    let r = run(
        &["-c", "[[ ${BASH_VERSINFO[0]} -ge 4 ]] && echo new-enough"],
        None,
    );
    assert_eq!(r.stdout, "new-enough\n");
    let r = run(
        &[
            "-c",
            "a=$EPOCHSECONDS; b=${EPOCHREALTIME%.*}; echo $(( b - a < 2 ))",
        ],
        None,
    );
    assert_eq!(r.stdout, "1\n");
    let r = run(
        &[
            "-c",
            "[[ $EPOCHREALTIME =~ ^[0-9]+\\.[0-9]{6}$ ]] && echo ok",
        ],
        None,
    );
    assert_eq!(r.stdout, "ok\n");
}

/// `-i` with `-c`: the interactive defaults (emacs mode, HISTFILE) are
/// there too; with no PATH in the environment, the default search path.
/// Before, `-i -c` had neither and PATH stayed unset.
#[test]
fn interactive_defaults_and_default_path() {
    let out = common::rush()
        .args([
            "-i",
            "-c",
            "test -o emacs && echo emacs; echo ${HISTFILE:+hist}",
        ])
        .env("HOME", "/tmp")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "emacs\nhist\n");
    let out = common::rush()
        .args(["-c", "echo $PATH"])
        .env_remove("PATH")
        .output()
        .unwrap();
    let path = String::from_utf8_lossy(&out.stdout);
    assert!(path.split(':').any(|d| d.trim() == "/usr/bin"), "{path:?}");
}

/// In an interactive shell an error that would end a script (`set -u`, a
/// bad substitution) abandons the rest of the line only; the next line
/// runs (bash). Before, `rush -i` exited.
#[test]
fn interactive_errors_abandon_the_line_only() {
    let out = common::rush()
        .args([
            "-i",
            "-c",
            "set -u; echo before; echo $nope; echo after\necho line2",
        ])
        .env("HOME", "/tmp")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "before\nline2\n");
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope: unbound variable"));
    // Not interactive: the script ends there.
    let out = common::rush()
        .args([
            "-c",
            "set -u; echo before; echo $nope; echo after\necho line2",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "before\n");
    assert_ne!(out.status.code(), Some(0));
}

/// An interactive shell reading a pipe (`rush -i < commands`): `~/.rushrc`
/// is read (`--rcfile FILE` instead, `--norc` none), then `$ENV`; and the
/// first `history -s` of a line replaces that line's entry while the next
/// ones add, as in bash.
#[test]
fn interactive_start_up_files_and_history_s() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    std::fs::write(h.join(".rushrc"), "RC=rc\n").unwrap();
    std::fs::write(h.join("alt.sh"), "ALT=alt\n").unwrap();
    std::fs::write(h.join("env.sh"), "EV=env\n").unwrap();
    let run = |flags: &[&str], input: &str| -> String {
        let mut c = common::rush();
        c.arg("-i")
            .args(flags)
            .env("HOME", h)
            .env("HISTFILE", h.join("history"))
            .env("ENV", h.join("env.sh"))
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        String::from_utf8_lossy(&output_with_input(&mut c, input).stdout).into_owned()
    };
    assert_eq!(run(&[], "echo [$RC][$ALT][$EV]\n"), "[rc][][env]\n");
    let alt = h.join("alt.sh");
    assert_eq!(
        run(&["--rcfile", alt.to_str().unwrap()], "echo [$RC][$ALT]\n"),
        "[][alt]\n"
    );
    assert_eq!(run(&["--norc"], "echo [$RC]\n"), "[]\n");
    let _ = std::fs::remove_file(h.join("history"));
    assert_eq!(
        run(&["--norc"], "history -s foo; history -s bar; history\n"),
        "    1  foo\n    2  bar\n"
    );
}

/// Error messages name what bash's name: the script for a script, the NAME
/// after `-c CMD NAME`, the file of the function or sourced file being
/// run, and otherwise the shell as invoked, so that rush installed as
/// `bash` says `bash:`. Before, every message began `rush: line N:`.
#[test]
fn error_messages_name_what_bash_names() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let link = d.join("bash");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_rush"), &link).unwrap();
    std::fs::write(d.join("s.sh"), "true\nnosuch\n").unwrap();
    std::fs::write(d.join("e.sh"), "eval 'echo (x'\n  if then fi\n").unwrap();
    std::fs::write(d.join("q.sh"), "true\necho ${a\nb $(c)\n").unwrap();
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["-c", "nosuch"],
            "",
            "bash: line 1: nosuch: command not found\n",
        ),
        (
            &["-c", "true; nosuch", "NAME"],
            "",
            "NAME: line 1: nosuch: command not found\n",
        ),
        (
            &["./s.sh"],
            "",
            "./s.sh: line 2: nosuch: command not found\n",
        ),
        (
            &["-c", "f() { nosuch; }; f"],
            "",
            "environment: line 1: nosuch: command not found\n",
        ),
        (
            &["-c", ". ./s.sh"],
            "",
            "./s.sh: line 2: nosuch: command not found\n",
        ),
        (
            &[],
            "true\ncd /nonexistent\n",
            "bash: line 2: cd: /nonexistent: No such file or directory\n",
        ),
        (
            &[],
            "f() { nosuch; }\nf\n",
            "main: line 1: nosuch: command not found\n",
        ),
        (
            &["./nonexistent.sh"],
            "",
            "bash: ./nonexistent.sh: No such file or directory\n",
        ),
        // Syntax errors: where the text came from, then its line.
        (
            &["./e.sh"],
            "",
            "./e.sh: eval: line 1: syntax error near unexpected token `x'\n\
             ./e.sh: eval: line 1: `echo (x'\n\
             ./e.sh: line 2: syntax error near unexpected token `then'\n\
             ./e.sh: line 2: `  if then fi'\n",
        ),
        (
            &["-c", "true\nfoo )"],
            "",
            "bash: -c: line 2: syntax error near unexpected token `)'\n\
             bash: -c: line 2: `foo )'\n",
        ),
        (
            &["-c", "echo a | in"],
            "",
            "bash: -c: line 1: syntax error near unexpected token `in'\n\
             bash: -c: line 1: `echo a | in'\n",
        ),
        (
            &["-c", "for bad-name in a; do :; done"],
            "",
            "bash: line 1: `bad-name': not a valid identifier\n",
        ),
        (
            &[],
            "eval 'a )'\n",
            "bash: eval: line 1: syntax error near unexpected token `)'\n\
             bash: eval: line 1: `a )'\n",
        ),
        // An unclosed quote or bracket: the line where it opened.
        (
            &["-c", "echo x\necho \"a\nb\nc"],
            "",
            "bash: -c: line 2: unexpected EOF while looking for matching `\"'\n",
        ),
        (
            &["./q.sh"],
            "",
            "./q.sh: line 2: unexpected EOF while looking for matching `}'\n",
        ),
        // The end of the text is the newline bash reads there.
        (
            &["-c", "echo >"],
            "",
            "bash: -c: line 1: syntax error near unexpected token `newline'\n\
             bash: -c: line 1: `echo >'\n",
        ),
        // A backslash at the end of an eval'd text continues the line.
        (
            &[],
            "true\neval 'X() { (a)>\\'\n",
            "bash: eval: line 4: syntax error: unexpected end of file\n",
        ),
    ];
    for (args, input, want) in cases {
        // The real bash, then rush by the name `bash`, found first on the
        // PATH.
        let system = std::env::var("PATH").unwrap();
        let ours = format!("{}:{system}", d.display());
        for (program, path) in [("bash", &system), ("rush as bash", &ours)] {
            let out = output_with_input(
                std::process::Command::new("bash")
                    .args(*args)
                    .current_dir(d)
                    .env("PATH", path)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped()),
                input,
            );
            assert_eq!(
                String::from_utf8_lossy(&out.stderr),
                *want,
                "{program} {args:?} with {input:?}"
            );
        }
    }
}
