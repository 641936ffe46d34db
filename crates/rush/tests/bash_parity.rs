//! Behaviours that real bash scripts depend on, each checked against the
//! expected output and, where bash is installed, against bash itself.

mod common;
use common::*;

/// Each script, run with no, one and two arguments: (script, outputs).
fn with_args(cases: &[(&str, [&str; 3])]) {
    let args: [&[&str]; 3] = [&[], &["a"], &["a", "b"]];
    for (script, outs) in cases {
        for (a, out) in args.iter().zip(outs) {
            like_bash(script, a, out, 0);
        }
    }
}

#[test]
fn empty_quoted_lists_make_no_field() {
    with_args(&[
        ("g() { echo $#; }; g \"$@\"", ["0\n", "1\n", "2\n"]),
        (
            "printf '[%s]' \"$@\" x; echo",
            ["[x]\n", "[a][x]\n", "[a][b][x]\n"],
        ),
        (
            "printf '[%s]' \"${@:2}\" x; echo",
            ["[x]\n", "[x]\n", "[b][x]\n"],
        ),
        (
            "printf '[%s]' \"$@\" \"$@\"; echo",
            ["[]\n", "[a][a]\n", "[a][b][a][b]\n"],
        ),
        (
            "printf '[%s]' x\"$@\"y; echo",
            ["[xy]\n", "[xay]\n", "[xa][by]\n"],
        ),
        (
            "printf '[%s]' \"${@-d}\" z; echo",
            ["[d][z]\n", "[a][z]\n", "[a][b][z]\n"],
        ),
        (
            "printf '[%s]' \"${@:-}\" z; echo",
            ["[][z]\n", "[a][z]\n", "[a][b][z]\n"],
        ),
        (
            "printf '[%s]' \"${@:+x}\" z; echo",
            ["[z]\n", "[x][z]\n", "[x][z]\n"],
        ),
        (
            "x=; printf '[%s]' \"$@$x\" z; echo",
            ["[z]\n", "[a][z]\n", "[a][b][z]\n"],
        ),
        (
            "x=; printf '[%s]' \"$x\" z; echo",
            ["[][z]\n", "[][z]\n", "[][z]\n"],
        ),
        (
            "printf '[%s]' \"$@\"\"\" z; echo",
            ["[][z]\n", "[a][z]\n", "[a][b][z]\n"],
        ),
        (
            "unset IFS; printf '[%s]' \"$*\" z; echo",
            ["[][z]\n", "[a][z]\n", "[a b][z]\n"],
        ),
        (
            "IFS=; printf '[%s]' \"$*\" z; echo",
            ["[][z]\n", "[a][z]\n", "[ab][z]\n"],
        ),
        (
            "IFS=:; printf '[%s]' \"$*\" z; echo",
            ["[][z]\n", "[a][z]\n", "[a:b][z]\n"],
        ),
        (
            "for i in \"$@\"; do echo \"[$i]\"; done; echo .",
            [".\n", "[a]\n.\n", "[a]\n[b]\n.\n"],
        ),
        (
            "IFS=:; x=\"$@\"; y=$@; echo \"[$x][$y]\"",
            ["[][]\n", "[a][a]\n", "[a b][a b]\n"],
        ),
        (
            "case \"$@\" in '') echo e;; *) echo \"<$*>\";; esac",
            ["e\n", "<a>\n", "<a b>\n"],
        ),
        (
            "[[ \"$@\" == '' ]] && echo e || echo n",
            ["e\n", "n\n", "n\n"],
        ),
        ("cat <<E\n[$@]\nE", ["[]\n", "[a]\n", "[a b]\n"]),
        (
            "f() { local l=(\"$@\"); echo ${#l[@]}; }; f \"$@\"",
            ["0\n", "1\n", "2\n"],
        ),
    ]);
    // `exec` with no words only applies redirections; with words it runs them.
    like_bash("exec \"$@\"; echo after", &[], "after\n", 0);
    like_bash("exec \"$@\"", &["echo", "hi"], "hi\n", 0);
}

#[test]
fn empty_arrays_make_no_field() {
    for (script, out) in [
        ("a=(); printf '[%s]' \"${a[@]}\" x; echo", "[x]\n"),
        ("a=(); printf '[%s]' \"${a[@]:1}\" x; echo", "[x]\n"),
        ("a=(q); printf '[%s]' \"${a[@]:1}\" x; echo", "[x]\n"),
        ("a=(); printf '[%s]' \"${a[@]/x/y}\" x; echo", "[x]\n"),
        (
            "a=(); printf '[%s]' \"${a[@]#x}\" \"${a[@]^^}\" x; echo",
            "[x]\n",
        ),
        ("a=(); printf '[%s]' \"${!a[@]}\" x; echo", "[x]\n"),
        (
            "a=(); printf '[%s]' \"${a[@]}\"\"${a[@]}\" x; echo",
            "[x]\n",
        ),
        ("a=(); printf '[%s]' \"${a[@]:+y}\" x; echo", "[x]\n"),
        ("a=(); printf '[%s]' \"${a[@]:-}\" x; echo", "[][x]\n"),
        ("a=(); printf '[%s]' \"${a[*]}\" x; echo", "[][x]\n"),
        ("a=(); printf '[%s]' \"${#a[@]}\" x; echo", "[0][x]\n"),
        ("a=(''); printf '[%s]' \"${a[@]}\" x; echo", "[][x]\n"),
        ("a=(); b=(\"${a[@]}\"); echo ${#b[@]}", "0\n"),
        ("a=(p '' q); b=(\"${a[@]}\"); echo ${#b[@]}", "3\n"),
        ("set -- a ''; printf '[%s]' \"$@\"; echo", "[a][]\n"),
    ] {
        like_bash(script, &[], out, 0);
    }
}

#[test]
fn regex_operand_is_lexed_as_bash_does() {
    for (script, out) in [
        ("[[ a =~ (a|b) ]]; echo $?", "0\n"),
        ("[[ a =~ (a) ]]; echo $?", "0\n"),
        ("[[ a =~ ^([>]|b)$ ]]; echo $?", "1\n"),
        ("[[ '>' =~ ^([>]|b)$ ]]; echo $?", "0\n"),
        (
            "[[ 'a b' =~ (a b) ]]; echo $? ${BASH_REMATCH[1]}",
            "0 a b\n",
        ),
        ("[[ 'a&b' =~ (a&b|c;d) ]]; echo $?", "0\n"),
        ("[[ a =~ a|b ]]; echo $?", "0\n"),
        (
            "[[ ab =~ (a)(b) && 1 == 1 ]]; echo $? ${BASH_REMATCH[2]}",
            "0 b\n",
        ),
        ("[[ ( ab =~ a ) ]]; echo $?", "0\n"),
        ("[[ x =~ ^(x|y)$ || z ]]; echo $?", "0\n"),
        (
            "[[ 1.10 =~ ^([0-9]+)(\\.([0-9]+))?$ ]] && echo ${BASH_REMATCH[3]}",
            "10\n",
        ),
        ("[[ a =~ (a\n) ]]; echo $?", "1\n"),
        // Quoted characters match themselves; unquoted expansions are regex.
        ("[[ axb =~ \"a.b\" ]]; echo $?", "1\n"),
        ("[[ axb =~ a\".\"b ]]; echo $?", "1\n"),
        ("[[ '(' =~ \"(\" ]]; echo $?", "0\n"),
        ("re='a.b'; [[ axb =~ $re ]]; echo $?", "0\n"),
        ("re='a.b'; [[ axb =~ \"$re\" ]]; echo $?", "1\n"),
        // A regular expression that does not compile: status 2.
        ("[[ 'x{' =~ x{ ]]; echo $?", "2\n"),
    ] {
        like_bash(script, &[], out, 0);
    }
}

/// Functions whose bodies use most of the grammar (written for this test).
const FUNCTIONS: &str = r#"f(){ echo "a $x" 'b' ${y:-z} $(ls /) $((1+2)) "${a[@]}" ${x}y "\$q" $'a\tb' 'it'"'"'s'; if true; then x=1; elif false; then :; else y=2; fi; for i in a b; do echo $i; done; while false; do :; done; case $x in a|b) echo;; *) ;; esac; a=(1 2) b[1]=3 cmd >/dev/null 2>&1 <<<"s"; ( cd /; ls ) | cat & [[ -n $x && $y == z* ]]; (( x++ )); { echo; }; cat <<EOF
hello $x \$y
EOF
cat <<'EOF'
raw $x
EOF
! true && false || :; for ((i=0;i<2;i++)); do :; done; local -a z=(1 "2 3"); echo ${#z[@]} ${z[@]:1} ${x//a/b} ${x#a} ${!p} ${x^^} ${10}; [[ a =~ ^(a|b)$ ]]; }
g() ( echo sub )
h() { x=1; } >/dev/null
"#;

/// A command whose name is a reserved word, made a command by a
/// redirection before it (`</dev/null do`). bash prints it as
/// `do < /dev/null`, which reads back as the reserved word, so its own
/// `eval "$(declare -f f)"` fails; rush keeps the redirection first. Found
/// by the `rush-unparse` fuzz target.
#[test]
fn declare_f_keeps_a_reserved_command_name_a_command() {
    let r = dash_c(
        "f() { </dev/null do; <<E done\nbody\nE\n echo after; }\n\
         eval \"$(declare -f f)\" && declare -f f",
        &[],
    );
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "f () \n{ \n    < /dev/null do;\n    <<E done\nbody\nE\n\n    echo after\n}\n"
    );
}

#[test]
fn declare_f_prints_bodies_that_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src.sh");
    std::fs::write(&src, FUNCTIONS).unwrap();
    let printed = dash_c(". \"$1\"; declare -f", &["sh", src.to_str().unwrap()]);
    assert_eq!(printed.status, 0, "{}", printed.stderr);
    assert!(
        printed
            .stdout
            .starts_with("f () \n{ \n    echo \"a $x\" 'b' ${y:-z}"),
        "{}",
        printed.stdout
    );
    assert!(
        printed
            .stdout
            .contains("\n    cat <<EOF\nhello $x \\$y\nEOF\n"),
        "{}",
        printed.stdout
    );
    assert!(
        printed
            .stdout
            .contains("g () \n{ \n    ( echo sub )\n}\nh () \n{ \n    x=1\n} > /dev/null\n"),
        "{}",
        printed.stdout
    );
    // Printing what was printed gives the same text.
    let again = dir.path().join("again.sh");
    std::fs::write(&again, &printed.stdout).unwrap();
    let r = dash_c(". \"$1\"; declare -f", &["sh", again.to_str().unwrap()]);
    assert_eq!(r.stdout, printed.stdout);
    // bash reads it back to the same functions as from the source.
    let bash = |file: &std::path::Path| {
        bash()
            .args(["-c", ". \"$1\"; declare -f", "sh", file.to_str().unwrap()])
            .output()
            .ok()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    if let (Some(a), Some(b)) = (bash(&src), bash(&again)) {
        assert_eq!(a, b);
    }
    // `type`, `declare -F`.
    let r = dash_c(
        "g() ( echo sub ); type g; declare -F; declare -F g nosuch; echo $?",
        &[],
    );
    assert_eq!(
        r.stdout,
        "g is a function\ng () \n{ \n    ( echo sub )\n}\ndeclare -f g\ng\n1\n"
    );
}

#[test]
fn bad_substitution_is_a_run_time_error() {
    // zsh-only syntax in a branch bash never takes (git's completion).
    like_bash(
        "if [[ -n ${ZSH_VERSION-} ]]; then unset ${(M)${(k)p[@]}:#g_*}; else echo bash; fi",
        &[],
        "bash\n",
        0,
    );
    like_bash("f() { echo ${a b}; }; echo defined", &[], "defined\n", 0);
    for script in [
        "echo ${(M)x}; echo after",
        "echo \"${%}\"; echo after",
        "x=${a b}; echo after",
    ] {
        let r = dash_c(script, &[]);
        assert_eq!((r.stdout.as_str(), r.status), ("", 1), "{script}");
        assert!(
            r.stderr.contains("bad substitution"),
            "{script}: {}",
            r.stderr
        );
    }
}

#[test]
fn strict_mode_headers_and_err_traps() {
    for (script, out, status) in [
        ("set -Eeuo pipefail; echo ok", "ok\n", 0),
        ("set -o errtrace -o functrace -T -E; echo ok", "ok\n", 0),
        // ERR is not inherited by functions without -E ...
        (
            "trap 'echo ERR $?' ERR; f() { false; echo after; }; f; false; (false); echo end",
            "after\nERR 1\nERR 1\nend\n",
            0,
        ),
        // ... and is with it, in functions and subshells.
        (
            "set -E; trap 'echo ERR $?' ERR; f() { false; echo after; }; f; echo end",
            "ERR 1\nafter\nend\n",
            0,
        ),
        (
            "set -Eeuo pipefail; trap 'echo failed $? >&2; echo trapped' ERR; f() { g; }; g() { false; }; f; echo unreachable",
            "trapped\n",
            1,
        ),
        (
            "trap 'echo ERR' ERR; if false; then :; fi; false || true; ! true; true && false; echo end",
            "ERR\nend\n",
            0,
        ),
    ] {
        like_bash(script, &[], out, status);
    }
}

#[test]
fn debug_and_return_traps() {
    for (script, out) in [
        (
            "trap 'echo D:$BASH_COMMAND' DEBUG; x=1; echo hi | cat; [[ -n $x ]]; (( x + 1 ))",
            "D:x=1\nD:echo hi\nD:cat\nhi\nD:[[ -n $x ]]\nD:(( x + 1 ))\n",
        ),
        // Not inherited by functions without -T; with it, also on entry.
        (
            "trap 'echo D:$BASH_COMMAND' DEBUG; f() { echo in; }; f",
            "D:f\nin\n",
        ),
        (
            "set -T; trap 'echo D:$BASH_COMMAND' DEBUG; f() { echo in; }; f",
            "D:f\nD:f\nD:echo in\nin\n",
        ),
        (
            "trap 'echo D' DEBUG; trap -p; trap - DEBUG; trap -p",
            "D\ntrap -- 'echo D' DEBUG\nD\n",
        ),
        // RETURN: set in the function, or inherited with -T; after `source`.
        ("trap 'echo ret' RETURN; f() { :; }; f; echo end", "end\n"),
        (
            "f() { trap 'echo ret $FUNCNAME' RETURN; }; f; echo mid; g() { :; }; g",
            "ret f\nmid\n",
        ),
        ("set -T; trap 'echo ret' RETURN; f() { :; }; f", "ret\n"),
        (
            "f() { false; return 3; }; trap 'echo r=$?' RETURN; set -T; f; echo $?",
            "r=1\n3\n",
        ),
        (
            "trap 'echo ret' RETURN; . /dev/null; echo end",
            "ret\nend\n",
        ),
    ] {
        like_bash(script, &[], out, 0);
    }
}

#[test]
fn operators_after_an_indirect_reference() {
    for (script, out) in [
        ("x=abc; set -- x; echo ${!1#a}", "bc\n"),
        ("set -- nosuch; echo ${!1:-d}", "d\n"),
        (
            "x=abc; set -- x; echo ${!1:1} ${!1^^} ${!1/b/B} ${!1%c} ${!1:+y} ${!1@Q}",
            "bc ABC aBc ab y 'abc'\n",
        ),
        (
            "x=axbx; n=x; echo ${!n//x/y} ${!n#a} ${!n:-d}",
            "ayby xbx axbx\n",
        ),
        ("set -- a b c x; x=X; echo ${!4} ${!4,}", "X x\n"),
        ("set -- a b; echo ${!#}", "b\n"),
        ("a=(p q); n='a[1]'; echo ${!n} ${!n#q}x", "q x\n"),
    ] {
        like_bash(script, &[], out, 0);
    }
}

#[test]
fn process_substitution() {
    for (script, out) in [
        ("cat <(echo hi)", "hi\n"),
        (
            "diff <(printf 'a\\nb\\n') <(printf 'a\\nc\\n'); echo rc=$?",
            "2c2\n< b\n---\n> c\nrc=1\n",
        ),
        (
            "while read -r l; do echo \"got $l\"; done < <(printf 'x\\ny\\n'); echo after",
            "got x\ngot y\nafter\n",
        ),
        ("wc -l < <(seq 1000)", "1000\n"),
        ("paste <(seq 3) <(seq 4 6)", "1\t4\n2\t5\n3\t6\n"),
        (
            "mapfile -t a < <(printf 'p\\nq\\n'); echo ${#a[@]} ${a[1]}",
            "2 q\n",
        ),
        (
            "f() { cat \"$1\"; }; f <(echo via-function)",
            "via-function\n",
        ),
        ("for i in 1 2 3; do cat <(echo $i); done", "1\n2\n3\n"),
        ("exec 3< <(echo fd3); cat <&3", "fd3\n"),
        // A writer whose reader stops early ends (SIGPIPE), not the shell.
        ("head -1 <(yes); echo done", "y\ndone\n"),
        ("echo hello > >(tr a-z A-Z); wait $!", "HELLO\n"),
        // Reaped before `wait` looks (its first reap of ended jobs), it is
        // still known to `wait $!`.
        (
            "echo hi > >(tr a-z A-Z); sleep 0.2; wait $!; echo rc=$?",
            "HI\nrc=0\n",
        ),
        // Out of the way of the user's own descriptor numbers.
        ("cat <(echo p) 3>/dev/null", "p\n"),
        ("[[ <(true) == /dev/fd/* ]] && echo path", "path\n"),
    ] {
        like_bash(script, &[], out, 0);
    }
    // The shell's ends are closed once the command is done: none leaks into
    // the next command.
    let r = dash_c(
        "cat <(echo a) >/dev/null; ls /proc/self/fd | wc -l; ls /proc/self/fd | wc -l",
        &[],
    );
    let counts: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(counts.len(), 2);
    assert_eq!(counts[0], counts[1], "{}", r.stdout);
}

#[test]
fn directory_stack() {
    for (script, out) in [
        (
            "cd /tmp; pushd /usr >/dev/null; pushd /etc; dirs; popd; dirs -v; popd; pwd",
            "/etc /usr /tmp\n/etc /usr /tmp\n/usr /tmp\n 0  /usr\n 1  /tmp\n/tmp\n/tmp\n",
        ),
        (
            "cd /; pushd /tmp > /dev/null; pushd +1; dirs -p",
            "/ /tmp\n/\n/tmp\n",
        ),
        (
            "cd /; pushd /usr; pushd /etc; pushd -n /var; dirs; popd -n; popd +1; dirs; echo ${DIRSTACK[@]}",
            "/usr /\n/etc /usr /\n/etc /var /usr /\n/etc /var /usr /\n/etc /usr /\n/etc /\n/etc /\n/etc /\n",
        ),
        (
            "HOME=/usr; cd /usr/lib; pushd / >/dev/null; dirs; dirs -l; dirs +1; dirs -0",
            "/ ~/lib\n/ /usr/lib\n~/lib\n~/lib\n",
        ),
        (
            "pushd 2>/dev/null; echo $?; popd 2>/dev/null; echo $?",
            "1\n1\n",
        ),
        (
            "pushd /nonexistent 2>/dev/null; echo $?; dirs -c; dirs",
            "1\n/\n",
        ),
    ] {
        let script = format!("cd /; {script}");
        like_bash(&script, &[], out, 0);
    }
}

#[test]
fn call_stack_variables_and_caller() {
    let dir = tempfile::tempdir().unwrap();
    let lib = dir.path().join("lib.sh");
    let main = dir.path().join("main.sh");
    std::fs::write(
        &lib,
        "f() { echo \"${FUNCNAME[*]}|${BASH_LINENO[*]}\"; caller; caller 0; caller 1; }\n\
         g() { f; }\n\
         g\n\
         echo \"top:${FUNCNAME[*]}:${#FUNCNAME[@]}:$BASH_LINENO\"\n",
    )
    .unwrap();
    std::fs::write(
        &main,
        format!(
            ". {}\nh() {{ f; }}\nh\necho \"end:${{#FUNCNAME[@]}}\"\n",
            lib.display()
        ),
    )
    .unwrap();
    let (l, m) = (lib.display().to_string(), main.display().to_string());
    let expect = format!(
        "f g source main|2 3 1 0\n2 {l}\n2 g {l}\n3 source {l}\ntop::0:1\n\
         f h main|2 3 0\n2 {m}\n2 h {m}\n3 main {m}\nend:0\n"
    );
    let r: Run = rush().arg(&main).output().unwrap().into();
    assert_eq!(r.stdout, expect, "{}", r.stderr);
    if let Ok(b) = bash().arg(&main).output() {
        assert_eq!(String::from_utf8_lossy(&b.stdout), expect);
    }
    // BASH_SOURCE[0]: the idiom for finding a script's own folder.
    let r: Run = rush()
        .arg("-c")
        .arg(format!(". {l} >/dev/null; echo \"${{BASH_SOURCE[*]}}\"; k() {{ echo \"${{BASH_SOURCE[0]}}\"; }}; k"))
        .output()
        .unwrap()
        .into();
    assert_eq!(r.stdout, "\nenvironment\n");
    // -c mode has no `main` frame, as in bash.
    like_bash(
        "f() { echo \"${FUNCNAME[*]}|${BASH_LINENO[*]}\"; caller; caller 0; echo $?; }; f",
        &[],
        "f|1\n1 NULL\n1\n",
        0,
    );
}

#[test]
fn printf_time_format() {
    for (script, out) in [
        ("TZ=UTC printf '%(%Y-%m-%d)T\\n' 86400", "1970-01-02\n"),
        (
            "TZ=UTC printf '%(%F %T)T\\n' 1700000000",
            "2023-11-14 22:13:20\n",
        ),
        ("TZ=Asia/Tokyo printf '%(%H:%M)T\\n' 0", "09:00\n"),
        (
            "export TZ=UTC; printf '[%10(%Y)T][%-6(%Y)T][%.2(%Y)T]\\n' 0 0 0",
            "[      1970][1970  ][19]\n",
        ),
        ("TZ=UTC printf '%()T\\n' 0", "00:00:00\n"),
        ("printf -v x '%(%Y)T' 0; echo ${#x}", "4\n"),
        // No argument, and -1: now.
        (
            "a=$(printf '%(%s)T'); b=$(printf '%(%s)T' -1); echo $(( b - a < 2 && a > 1700000000 ))",
            "1\n",
        ),
        // -2: when the shell started, no later than now.
        (
            "a=$(printf '%(%s)T' -2); (( a <= EPOCHSECONDS )) && echo ok",
            "ok\n",
        ),
    ] {
        like_bash(script, &[], out, 0);
    }
}

#[test]
fn extglob_in_globs_case_and_expansions() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["a.txt", "b.txt", "c.log", "d.sh", ".hidden.txt"] {
        std::fs::write(dir.path().join(f), "").unwrap();
    }
    for (script, out) in [
        ("echo !(*.txt)", "c.log d.sh\n"),
        ("echo @(a|c).*", "a.txt c.log\n"),
        ("echo *.@(txt|log)", "a.txt b.txt c.log\n"),
        ("echo +([a-c]).txt ?(a).txt", "a.txt b.txt a.txt\n"),
        ("echo @(nomatch|zz)", "@(nomatch|zz)\n"),
        (
            "case foo.tar.gz in *.@(tar.gz|tgz)) echo tarball;; esac",
            "tarball\n",
        ),
        (
            "f() { case $1 in @(-h|--help)) echo help;; !(-*)) echo arg;; *) echo opt;; esac; }; f -h; f x; f -v",
            "help\narg\nopt\n",
        ),
        ("x=aaab; echo ${x##+(a)}", "b\n"),
        ("x='  lead'; echo \"[${x##*( )}]\"", "[lead]\n"),
        ("a=(x.c y.h z.c); echo ${a[@]/%.@(c|h)/.o}", "x.o y.o z.o\n"),
        ("v='a b'; [[ 'a b' == @($v|z) ]] && echo var", "var\n"),
        (
            "[[ 1.2.3 == +([0-9])+(.+([0-9])) ]] && echo version",
            "version\n",
        ),
        // Quoted, it is text.
        ("echo \"@(a|b)\" '!(x)'", "@(a|b) !(x)\n"),
    ] {
        like_bash_in(dir.path(), &["-O", "extglob"], script, out, 0);
    }
    // `shopt -s extglob` takes effect for the commands after its line.
    let r = dash_c("shopt -s extglob\ncase ab in +(a|b)) echo yes;; esac", &[]);
    assert_eq!(r.stdout, "yes\n", "{}", r.stderr);
    // Off, `@(` is a syntax error, as in bash.
    let r = dash_c("echo @(x)", &[]);
    assert_eq!(r.status, 2);
}

#[test]
fn extglob_in_double_brackets_is_always_on() {
    for (script, out) in [
        ("[[ foo == @(foo|bar) ]] && echo y", "y\n"),
        ("[[ foo == !(foo|bar) ]] || echo n", "n\n"),
        ("[[ abc == +(a|b|c) ]] && echo plus", "plus\n"),
        ("[[ '' == ?(x) ]] && echo opt", "opt\n"),
        ("[[ xx == *(x) ]] && echo star", "star\n"),
        ("[[ /usr/lib == @(/usr|/opt)/* ]] && echo path", "path\n"),
    ] {
        like_bash(script, &[], out, 0);
    }
}

/// A repetition that must fail over a long text takes polynomial time, not
/// exponential (bash itself takes seconds here at 34 characters).
#[test]
fn extglob_repetition_does_not_blow_up() {
    let out = std::process::Command::new("timeout")
        .args(["20", env!("CARGO_BIN_EXE_rush"), "-c"])
        .arg("x=$(printf 'a%.0s' {1..400})c; [[ $x == *(a|aa) ]]; echo $?; [[ ${x%c} == +(a|aa) ]]; echo $?")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n0\n");
}

/// Inside `${…}` the first `}` ends the word: braces do not nest (a pattern
/// from bash-completion's `__parse_options`).
#[test]
fn braces_inside_parameter_words_do_not_nest() {
    for (script, out) in [
        ("o='ab(c'; echo \"${o%%[<{().[]*}\"", "ab\n"),
        ("o='a{b}c'; echo ${o%%{*} ${o#*{b}}", "a }c}\n"),
        ("echo ${x:-a{b}c} ${x:-{}", "a{bc} {\n"),
        ("echo ${x:-${y:-z}} ${x:-\"}\"}", "z }\n"),
    ] {
        like_bash(script, &[], out, 0);
    }
}

#[test]
fn programmable_completion_builtins() {
    let script = r#"complete -o nospace -o filenames -F _f -W "a b" -P pre -S suf -X "!*.c" -G "*.x" -A arrayvar -d -f cmd1
complete -c -b cmd2; complete -p cmd1 cmd2
complete -p nosuch 2>/dev/null; echo rc=$?
complete -r cmd2; complete -p cmd2 2>/dev/null; echo rc=$?
compopt -o nospace 2>/dev/null; echo rc=$?
compgen -W "alpha beta alps" -- al; echo rc=$?
compgen -W "x y" -- z; echo rc=$?
compgen -W "a b" -P "<" -S ">"
compgen -X "b*" -W "ab ba bb ac"; compgen -X "!b*" -W "ab ba bb ac"
compgen -X "&*" -W "foo fob bar" -- fo
compgen -A shopt -- ext; compgen -A setopt -- err; compgen -k -- fu; compgen -b -- ec
compgen -A signal -- SIGH; compgen -v -- BASH_VERS
compgen -W "'a b' c"
compgen -o bogus 2>/dev/null; echo rc=$?; compgen -A bogus 2>/dev/null; echo rc=$?
f() { COMPREPLY=(x$1 y$2); }; compgen -F f -- w 2>/dev/null; compgen -C echo -- w 2>/dev/null
complete -F f -o default git; compopt +o default -o nospace git; complete -p git
compgen -A function -- f
"#;
    let expect = "complete -o filenames -o nospace -d -f -A arrayvar -G '*.x' -W 'a b' -P 'pre' -S 'suf' -X '!*.c' -F _f cmd1\n\
complete -b -c cmd2\nrc=1\nrc=1\nrc=1\nalpha\nalps\nrc=0\nrc=1\n<a>\n<b>\nab\nac\nba\nbb\n\
extdebug\nextglob\nextquote\nerrexit\nerrtrace\nfunction\necho\nSIGHUP\nBASH_VERSINFO\nBASH_VERSION\n\
a b\nc\nrc=2\nrc=2\nxcompgen\nyw\ncompgen w \ncomplete -o nospace -F f git\nf\n";
    like_bash(script, &[], expect, 0);
}

/// bash-completion's core, sourced: every function and specification bash
/// defines.
#[test]
fn sourcing_bash_completion_defines_what_bash_defines() {
    let file = "/usr/share/bash-completion/bash_completion";
    assert!(
        std::path::Path::new(file).is_file(),
        "bash-completion is not installed: apt-get install bash-completion"
    );
    let script =
        format!(". {file}; echo rc=$?; declare -F | sort | md5sum; complete -p | sort | md5sum");
    let r = dash_c(&script, &[]);
    let b = bash().arg("-c").arg(&script).output().unwrap();
    assert_eq!(r.stdout, String::from_utf8_lossy(&b.stdout), "{}", r.stderr);
    assert!(r.stdout.starts_with("rc=0\n"));
}

#[test]
fn v_tests_the_shells_variables() {
    for (script, out) in [
        ("x=1; [[ -v x ]] && echo y", "y\n"),
        ("f() { local x=1; [[ -v x ]] && echo y; }; f", "y\n"),
        ("f() { local x; [[ -v x ]] || echo n; }; f", "n\n"),
        (
            "a=(1 2); [[ -v a[1] ]] && echo y; [[ -v a[5] ]] || echo n",
            "y\nn\n",
        ),
        (
            "declare -A m=([k]=v); [[ -v m[k] ]] && echo y; [[ -v m[z] ]] || echo n",
            "y\nn\n",
        ),
        ("x=; [ -v x ] && echo y; test -v nosuch || echo n", "y\nn\n"),
        (
            "set -- a; [[ -v 1 ]] && echo y; [[ -v 2 ]] || echo n",
            "y\nn\n",
        ),
    ] {
        like_bash(script, &[], out, 0);
    }
}

#[test]
fn saving_and_restoring_set_options() {
    for (script, out) in [
        (
            "shopt -po noglob; set -f; shopt -po noglob",
            "set +o noglob\nset -o noglob\n",
        ),
        (
            "reset=$(shopt -po noglob); set -o noglob; $reset; [[ $- == *f* ]] || echo restored",
            "restored\n",
        ),
        (
            "f() { local -; set -fu; [[ $- == *f* ]] && echo in; }; f; [[ $- == *f* ]] || echo out",
            "in\nout\n",
        ),
        ("f() { local - x=1; echo $x; }; f", "1\n"),
        (
            "shopt -o noglob; shopt -oq errexit; echo $?",
            "noglob         \toff\n1\n",
        ),
    ] {
        like_bash(script, &[], out, 0);
    }
}

#[test]
fn compgen_signals_and_plusdirs_as_bash() {
    let r = dash_c("compgen -A signal | tr '\\n' ' '", &[]);
    assert!(r.stdout.starts_with("EXIT SIGHUP SIGINT "), "{}", r.stdout);
    assert!(
        r.stdout
            .contains(" SIGJUNK(32) SIGJUNK(33) SIGRTMIN SIGRTMIN+1 "),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains(" SIGRTMIN+15 SIGRTMAX-14 "),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.ends_with(" SIGRTMAX DEBUG ERR RETURN "),
        "{}",
        r.stdout
    );
    if let Ok(b) = bash()
        .args(["-c", "compgen -A signal | tr '\\n' ' '"])
        .output()
    {
        assert_eq!(r.stdout, String::from_utf8_lossy(&b.stdout));
    }
    // plusdirs: directories last, past the filter, without prefix.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::create_dir(dir.path().join(".hid")).unwrap();
    let r: Run = rush()
        .args([
            "-c",
            "compgen -W a -P '<' -o plusdirs; compgen -W a -o plusdirs -X '!*.x'; compgen -d",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap()
        .into();
    assert_eq!(r.stdout, "<a\n.hid\nsub\n.hid\nsub\n.hid\nsub\n");
}

/// git's own completion script, driven as the line editor drives it.
#[test]
fn git_completion_completes() {
    let file = "/usr/share/bash-completion/completions/git";
    assert!(
        std::path::Path::new(file).is_file(),
        "git's completion is not installed: apt-get install git"
    );
    let dir = tempfile::tempdir().unwrap();
    let setup = "git init -q -b main . && git -c user.email=t@e -c user.name=t commit -q --allow-empty -m x && git branch feature && git tag v1.0";
    if !std::process::Command::new("sh")
        .args(["-c", setup])
        .current_dir(dir.path())
        .status()
        .is_ok_and(|s| s.success())
    {
        panic!("git cannot make a repository (apt-get install git)");
    }
    let script = format!(
        ". {file}\n\
         c() {{ COMP_LINE=$1; COMP_POINT=${{#1}}; read -ra COMP_WORDS <<< \"$1\"; [[ $1 == *' ' ]] && COMP_WORDS+=(''); \
         COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); COMPREPLY=(); __git_wrap__git_main git \"${{COMP_WORDS[COMP_CWORD]}}\" x; \
         printf '%s|' \"${{COMPREPLY[@]}}\"; echo; }}\n\
         c 'git che'; c 'git checkout fe'; c 'git show v'; c 'git log --on'"
    );
    let r: Run = rush()
        .arg("-c")
        .arg(&script)
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .output()
        .unwrap()
        .into();
    assert_eq!(
        r.stdout, "checkout |cherry-pick |cherry |\nfeature |\nv1.0 |\n--oneline |\n",
        "{}",
        r.stderr
    );
}

/// The shopt options scripts rely on, in a real folder, against bash.
#[test]
fn shopt_options_that_change_results() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
    for f in ["a/x.txt", "a/b/y.txt", "Z.TXT"] {
        std::fs::write(dir.path().join(f), "").unwrap();
    }
    let in_dir =
        |script: &str, out: &str, status: i32| like_bash_in(dir.path(), &[], script, out, status);
    // patsub_replacement, on by default in bash 5.2.
    in_dir(
        "x=aXbXc; r='<&>'; echo ${x/X/[&]} ${x//X/$r} \"${x/#a/&&}\" ${x//X/\\&} ${x//X/'&'}",
        "a[X]bXc a<X>b<X>c aaXbXc a&b&c a&b&c\n",
        0,
    );
    in_dir(
        "shopt -u patsub_replacement; x=ab; echo ${x/b/[&]}",
        "a[&]\n",
        0,
    );
    // nocasematch: case, [[ == ]], =~ and ${x/p/r}, not ${x#p}.
    in_dir(
        "shopt -s nocasematch; [[ ABC == abc ]] && echo y; case X in x) echo c;; esac; [[ ABC =~ ^a ]] && echo re; x=ABC; echo ${x/b/-} ${x#a}",
        "y\nc\nre\nA-C ABC\n",
        0,
    );
    // nocaseglob, globstar, failglob.
    in_dir("shopt -s nocaseglob; echo *.txt", "Z.TXT\n", 0);
    in_dir(
        "shopt -s globstar; echo **/*.txt; echo **; echo a/**; echo **/",
        "a/b/y.txt a/x.txt\nZ.TXT a a/b a/b/y.txt a/x.txt\na/ a/b a/b/y.txt a/x.txt\na/ a/b/\n",
        0,
    );
    in_dir("shopt -s failglob; echo *.nope; echo after", "", 1);
    // shift_verbose, execfail, localvar_inherit.
    in_dir(
        "shopt -s shift_verbose; shift 3 2>/dev/null; echo $?",
        "1\n",
        0,
    );
    in_dir(
        "shopt -s execfail; exec /nonexistent 2>/dev/null; echo survived",
        "survived\n",
        0,
    );
    in_dir("exec /nonexistent 2>/dev/null; echo not", "", 127);
    in_dir(
        "shopt -s localvar_inherit; x=g; f() { local x; echo \"[$x]\"; }; f",
        "[g]\n",
        0,
    );
    // A command substitution does not inherit set -e, unless inherit_errexit.
    in_dir("set -e; x=$(false; echo yes); echo \"[$x]\"", "[yes]\n", 0);
    in_dir(
        "set -e; shopt -s inherit_errexit; x=$(false; echo no); echo \"[$x]\"",
        "",
        1,
    );
}

/// Values with control characters print as `$'…'`, as bash writes them
/// (`${x@Q}`, `declare -p`, `set`); names print in the order given.
#[test]
fn ansi_c_quoting_of_values() {
    let script = "x=$'a\\tb\\nc'; y=$'\\e[1m\\x01\\x7f'; z=\"it's\"; w=$'q\\x27\\x01'\n\
        echo ${x@Q} ${y@Q} ${z@Q} ${w@Q}\n\
        declare -p x z w y; a=(p $'q\\tr'); declare -p a\n\
        set | grep '^x='";
    let out = "$'a\\tb\\nc' $'\\E[1m\\001\\177' 'it'\\''s' $'q\\'\\001'\n\
        declare -- x=$'a\\tb\\nc'\ndeclare -- z=\"it's\"\ndeclare -- w=$'q\\'\\001'\ndeclare -- y=$'\\E[1m\\001\\177'\n\
        declare -a a=([0]=\"p\" [1]=$'q\\tr')\nx=$'a\\tb\\nc'\n";
    like_bash(script, &[], out, 0);
}

/// A signal ignored when the shell starts (as under `nohup`) cannot be
/// trapped or reset, and `trap -p` lists it as ignored, as bash does.
/// Before, rush listed nothing and let a trap replace the ignore.
#[test]
fn a_signal_ignored_at_the_start_stays_ignored_and_is_listed() {
    let script = "trap -p; trap 'echo hi' HUP; trap -p; kill -HUP $$; echo alive; \
                  trap - HUP; trap -p; (trap -p); trap '' INT; trap -p";
    let want = "trap -- '' SIGHUP\ntrap -- '' SIGHUP\nalive\ntrap -- '' SIGHUP\n\
                trap -- '' SIGHUP\ntrap -- '' SIGHUP\ntrap -- '' SIGINT\n";
    let mut r = rush();
    with_signal(&mut r, libc::SIGHUP, libc::SIG_IGN);
    let out = r.args(["-c", script]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), want);
    let mut b = bash();
    with_signal(&mut b, libc::SIGHUP, libc::SIG_IGN);
    if let Ok(out) = b.args(["-c", script]).output() {
        assert_eq!(String::from_utf8_lossy(&out.stdout), want, "bash disagrees");
    }
}

/// `time` reports in TIMEFORMAT's language: precision, the long form,
/// `%%`, a trailing `%`; an empty TIMEFORMAT reports nothing; a bad
/// character is an error and no report; `time -p` reports in POSIX's
/// format. Before, TIMEFORMAT was ignored, and `-p` was run as a command.
#[test]
fn time_reports_in_timeformat() {
    like_bash(
        // Digits masked: on a loaded machine `time true` can take 5 ms.
        "{ TIMEFORMAT='r=%0R u=%0U s=%0S p=%% %2R %2lR x %'; { time true; } 2>&1; \
         TIMEFORMAT=; { time true; } 2>&1; echo end; \
         TIMEFORMAT='%q'; { time true; } 2>&1 | sed 's/^.*TIMEFORMAT/TIMEFORMAT/'; \
         { time -p true; } 2>&1; } | sed 's/[0-9]/N/g'",
        &[],
        "r=N u=N s=N p=% N.NN NmN.NNs x %\nend\nTIMEFORMAT: `q': invalid format character\n\
         real N.NN\nuser N.NN\nsys N.NN\n",
        0,
    );
}

/// `select`: the menu on stderr, laid out in bash's columns (COLUMNS), the
/// PS3 prompt, REPLY as `read` reads it, the chosen item (empty for a
/// number out of range or not a number), the menu again after an empty
/// line, `break`, `continue` and `return` in it, and the end of input
/// (status 1, a newline). Before, `select` was a syntax error.
#[test]
fn select_menus_as_bash_does() {
    let cases: &[(&str, &str)] = &[
        (
            "select x in a b c; do echo \"x=[$x] R=[$REPLY]\"; done; echo \"rc=$?\"",
            "2\n\n9\nx\n",
        ),
        (
            "select x in $(seq 1 30); do echo \"x=$x\"; break; done",
            "1\n",
        ),
        (
            "COLUMNS=40; select x in alpha beta gamma delta epsilon zeta eta theta iota \
             kappa lambda; do echo \"x=$x\"; break; done",
            "1\n",
        ),
        (
            "set -- p q; PS3='pick: '; select x; do echo \"[$x][$REPLY]\"; continue; \
             echo no; done; echo \"rc=$?\"",
            " 2 \n1 2\na\\\nb\n",
        ),
        (
            "select x in 'a b' é c; do echo \"[$x]\"; break; done; echo rc=$?",
            "3\n",
        ),
        ("select x in; do echo never; done; echo rc=$?", ""),
        (
            "f() { select x in a b; do return 7; done; }; f; echo rc=$?",
            "1\n",
        ),
    ];
    let run = |mut c: std::process::Command, script: &str, input: &str| {
        let out = output_with_input(
            c.args(["-c", script])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped()),
            input,
        );
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for (script, input) in cases {
        let ours = run(rush(), script, input);
        if let Ok(true) = bash().arg("--version").output().map(|o| o.status.success()) {
            assert_eq!(ours, run(bash(), script, input), "select: {script:?}");
        }
    }
    let (out, err) = run(rush(), cases[0].0, cases[0].1);
    assert_eq!(out, "x=[b] R=[2]\nx=[] R=[9]\nx=[] R=[x]\n\nrc=1\n");
    assert_eq!(err, "1) a\n2) b\n3) c\n#? #? 1) a\n2) b\n3) c\n#? #? #? ");
}

/// `coproc`: a two-way pipe to a background command, its ends in
/// `NAME[0]` and `NAME[1]` (COPROC when not named; a name only before a
/// compound command), `NAME_PID` and `$!` its pid, the ends not inherited
/// by other commands, and the variables unset (the ends closed) once it is
/// reaped. Before, `coproc` was a command not found.
#[test]
fn coproc_talks_both_ways() {
    table_like_bash(&[
        (
            "coproc cat; echo hi >&${COPROC[1]}; read l <&${COPROC[0]}; echo $l; \
             eval \"exec ${COPROC[1]}>&-\"; wait $COPROC_PID; \
             echo \"rc=$? [${COPROC[@]-unset}] [${COPROC_PID-unset}]\"",
            "hi\nrc=0 [unset] [unset]\n",
        ),
        (
            "coproc NAME { while read x; do echo \"got $x\"; done; }; echo a >&\"${NAME[1]}\"; \
             read -u \"${NAME[0]}\" l; echo $l; [ \"$NAME_PID\" = \"$!\" ] && echo same; \
             kill $NAME_PID; wait; echo \"[${NAME[@]-unset}]\"",
            "got a\nsame\n[unset]\n",
        ),
        (
            "coproc ( echo sub ); read -u ${COPROC[0]} l; echo \"[$l]\"",
            "[sub]\n",
        ),
        (
            "coproc cat; ls /proc/self/fd | grep -c -x -e \"${COPROC[0]}\" -e \"${COPROC[1]}\"; \
             kill $COPROC_PID",
            "0\n",
        ),
        (
            "f() { coproc X { cat; }; }; declare -f f",
            "f () \n{ \n    coproc X { \n        cat\n    }\n}\n",
        ),
        // The ends at 63 and 60 as in bash, and -1 once moved away (bash's
        // tests/coproc).
        (
            "coproc cat; echo ${COPROC[@]}; exec 4<&${COPROC[0]}-; echo ${COPROC[@]}; \
             exec {w}>&${COPROC[1]}-; echo ${COPROC[@]}; exec {w}>&-; wait",
            "63 60\n-1 60\n-1 -1\n",
        ),
    ]);
}

/// Each script with its standard error joined to its output, and `tail`
/// after it (`\n:` for a last status of 0): (script, output).
fn stderr_like_bash(cases: &[(&str, &str)], tail: &str) {
    for (script, out) in cases {
        like_bash(&format!("exec 2>&1; {script}{tail}"), &[], out, 0);
    }
}

fn table_like_bash(cases: &[(&str, &str)]) {
    for (script, out) in cases {
        like_bash(script, &[], out, 0);
    }
}

/// `declare -p` of an associative array quotes the keys that need it, so
/// that `eval` reads it back, as bash's does. Before, `[b c]="2"` came out
/// bare and did not read back.
#[test]
fn declare_p_quotes_keys_that_need_it() {
    like_bash(
        "declare -A m=([\"b c\"]=2); declare -p m; \
         declare -A k=([\"a]b\"]=1 [\"\\$x\"]=2 [~u]=4 [ok]=5); s=$(declare -p k); unset k; \
         eval \"$s\"; echo \"${k[\"a]b\"]} ${k[\"\\$x\"]} ${k[~u]} ${k[ok]}\"",
        &[],
        "declare -A m=([\"b c\"]=\"2\" )\n1 2 4 5\n",
        0,
    );
}

/// `declare name` with no value declares it (unset; `declare -p` shows
/// it, and keeps a value it had), and `declare -p` shows the integer
/// attribute, as bash does. Before, the first was "not found" and the
/// second printed `--`.
#[test]
fn declare_p_shows_declared_names_and_integers() {
    like_bash(
        "declare u; declare -p u; echo \"${u-unset}\"; v=1; declare v; echo $v; \
         declare -i n=3; declare -p n; n+=2; declare -p n; declare -ri ro=4; declare -p ro; \
         typeset t; typeset -p t",
        &[],
        "declare -- u\nunset\n1\ndeclare -i n=\"3\"\ndeclare -i n=\"5\"\n\
         declare -ir ro=\"4\"\ndeclare -- t\n",
        0,
    );
}

/// `declare -i` on arrays: each element assigned is arithmetic (in
/// `declare -ai a=(…)`, `a+=(…)`, `a[i]=…` and `a[i]+=…`, and in an
/// associative array), as in bash. Before, the elements kept their text.
#[test]
fn integer_arrays_evaluate_their_elements() {
    like_bash(
        "declare -ai a=(1+1 \"2*3\"); declare -p a; a+=(4+4); a[5]=2**3; a[5]+=1; declare -p a; \
         declare -Ai m=([k]=1+2); m[j]=3*3; echo ${m[k]} ${m[j]}; \
         b=(x y); declare -i b; b[0]=5+5; declare -p b",
        &[],
        "declare -ai a=([0]=\"2\" [1]=\"6\")\n\
         declare -ai a=([0]=\"2\" [1]=\"6\" [2]=\"8\" [5]=\"9\")\n3 9\n\
         declare -ai b=([0]=\"10\" [1]=\"y\")\n",
        0,
    );
}

/// `declare -l` and `-u`: what is assigned from then on is lowercased or
/// uppercased (Unicode too; a value already there stays), arrays' elements
/// too, locals too; `-u` replaces `-l`, `+u` removes it; `declare -p`
/// shows them. Before, the flags were ignored.
#[test]
fn case_attributes_change_what_is_assigned() {
    like_bash(
        "declare -ilrx x=5; declare -p x; declare -u y=abc; declare -p y; y=def; echo $y; \
         z=ABC; declare -l z; echo $z; z=XYZ; echo $z; declare -la arr=(A B); declare -p arr; \
         declare -l q=A; declare -u q; q=b; echo $q; declare -p q; declare +u q; q=c; echo $q; \
         f(){ local -u w=abc; echo $w; local -ua a=(x y); declare -p a; }; f; \
         declare -l e=É; echo $e",
        &[],
        "declare -irxl x=\"5\"\ndeclare -u y=\"ABC\"\nDEF\nABC\nxyz\n\
         declare -al arr=([0]=\"a\" [1]=\"b\")\nB\ndeclare -u q=\"B\"\nc\nABC\n\
         declare -au a=([0]=\"X\" [1]=\"Y\")\né\n",
        0,
    );
}

/// `a[i + 1]=x` before a command is one assignment word, blanks and all
/// (bash); as an argument it is three words. Before, `a[i` ran as a
/// command.
#[test]
fn subscripts_with_blanks_in_assignments() {
    like_bash(
        "i=1; a[i + 1]=x; a[ 0 ]=y; a[i * 3]+=z; declare -p a; \
         declare -A m; m[one two]=v; declare -p m; \
         echo a[1 + 2]=w",
        &[],
        "declare -a a=([0]=\"y\" [2]=\"x\" [3]=\"z\")\ndeclare -A m=([\"one two\"]=\"v\" )\n\
         a[1 + 2]=w\n",
        0,
    );
}

/// The DEBUG trap runs before a `case`, before each round of `for x in`,
/// and before each of the three parts of `for ((…))`; in it, LINENO is the
/// line of the command about to run (pipeline elements too). Before, it
/// did not run for these, and pipeline elements saw the line before.
#[test]
fn debug_trap_before_compound_parts_with_their_lines() {
    like_bash(
        "trap 'echo \"  [$LINENO]\"' DEBUG\n\
         case x in\n\
         x) echo hit ;;\n\
         esac\n\
         for i in 1 2; do\n\
         echo i=$i\n\
         done\n\
         for ((j = 0; j < 1; j++)); do\n\
         echo j=$j\n\
         done\n\
         echo a |\n\
         cat\n\
         trap - DEBUG",
        &[],
        "  [2]\n  [3]\nhit\n  [5]\n  [6]\ni=1\n  [5]\n  [6]\ni=2\n  [8]\n  [8]\n  [9]\nj=0\n  [8]\n  [8]\n  \
         [11]\n  [12]\na\n  [13]\n",
        0,
    );
}

/// A subscript given as text at run time is expanded as words for an
/// associative array, as bash does: `unset 'm["k"]'`, `unset 'm[$k]'`,
/// `printf -v 'm[$k]'`, `ref='m["k"]'; ${!ref}`, `[[ -v 'm[$k]' ]]`.
/// Before, the quotes and `$k` were part of the key.
#[test]
fn runtime_subscripts_of_associative_arrays() {
    like_bash(
        "declare -A m=([K]=v [L]=w); k=K; \
         ref='m[\"K\"]'; echo ${!ref}; ref='m[$k]'; echo ${!ref}; \
         [[ -v 'm[$k]' ]] && echo set; \
         printf -v 'm[$k]' '/%s/' new; printf -v 'm[\"L\"]' x; echo ${m[K]} ${m[L]}; \
         unset -v 'm[\"K\"]'; unset 'm[$(echo L)]'; echo ${#m[@]}",
        &[],
        "v\nv\nset\n/new/ x\n0\n",
        0,
    );
}

/// `${x@P}` expands x as a prompt string; case changes are Unicode in a
/// UTF-8 locale; `${x@Q}` of an unset x is nothing. Before, `@P` was a bad
/// substitution, `${x^}` changed ASCII only, and `@Q` gave `''`.
#[test]
fn prompt_operator_unicode_case_and_quoting_unset() {
    like_bash(
        "export LC_ALL=C.UTF-8; p='\\u \\$ $((1+2)) \\101'; u=$(id -un); x=${p@P}; \
         [[ $x == \"$u \\$ 3 A\" || $x == \"$u # 3 A\" ]] && echo prompt; \
         a=(x '\\101'); echo \"${a[@]@P}\"; \
         v=àèé; echo ${v^} ${v^^} ${v@U} ${v@u}; w=ÀÉ; echo ${w,} ${w,,} ${w@L}; \
         unset n; echo \"[${n@Q}]\"",
        &[],
        "prompt\nx A\nÀèé ÀÈÉ ÀÈÉ Àèé\nàÉ àé àé\n[]\n",
        0,
    );
}

/// Namerefs (`declare -n`, `local -n`): reads, assignments, `unset` and
/// attributes go to the named variable; `${!ref}` is the name; `unset -n`
/// removes the reference; `declare -p` shows `-n`; a reference to an
/// element reads the element; one to `#` reads as its own value. Before,
/// `-n` was ignored.
#[test]
fn namerefs() {
    like_bash(
        "x=1; declare -n r=x; echo $r ${!r}; r=2; echo $x; declare -p r; \
         f() { local -n out=$1; out=(a b c); }; f arr; echo ${arr[@]}; \
         g() { local -n m=$1; m[k]=v; }; declare -A h; g h; echo ${h[k]}; \
         unset r; echo ${x-gone}; declare -p r; unset -n r; declare -p r 2>/dev/null || echo noref; \
         a=(zero one two); declare -n e='a[2]'; echo $e; \
         y='#'; declare -n y; echo $y",
        &[],
        "1 x\n2\ndeclare -n r=\"x\"\na b c\nv\ngone\ndeclare -n r=\"x\"\nnoref\ntwo\n#\n",
        0,
    );
}

/// `test -o NAME` tells whether a `set -o` option is on; vi and emacs
/// exclude each other; `declare -p SHELLOPTS` shows it. Before, `test -o`
/// was always false, both modes could be on, and SHELLOPTS was "not
/// found".
#[test]
fn option_tests_and_editing_modes() {
    like_bash(
        "set -o errexit; test -o errexit && echo e; test -o nounset || echo no-u; \
         [ -o pipefail ] || echo no-p; set +e; set -o vi; test -o emacs || echo vi-only; \
         set -o emacs; test -o vi || echo emacs-only; \
         declare -p SHELLOPTS | cut -c1-22",
        &[],
        "e\nno-u\nno-p\nvi-only\nemacs-only\ndeclare -r SHELLOPTS=\"\n",
        0,
    );
}

/// `printf %b` reads `\NNN` as well as `\0NNN`; `set +` is an empty flag
/// cluster and `set -` with nothing after it keeps the positional
/// parameters; UID, EUID and PPID are read-only. Before, `%b` left `\141`,
/// `set +` became `$1`, `set -` emptied them, and `UID=1` was accepted.
#[test]
fn printf_b_octal_set_plus_minus_and_readonly_ids() {
    like_bash(
        "printf '%b|' 'x\\141y' 'x\\0141y' '\\55' '\\0558'; echo; \
         set -- a b; set +; echo \"$@\"; set -; echo \"$@\"; set - +; echo \"$@\"; \
         (UID=1) 2>/dev/null || echo ro-uid; (PPID=1) 2>/dev/null || echo ro-ppid; \
         [ \"$UID\" = \"$(id -u)\" ] && echo uid",
        &[],
        "xay|xay|-|-8|\na b\na b\n+\nro-uid\nro-ppid\nuid\n",
        0,
    );
}

/// `getopts` after `set --` gave fewer arguments than OPTIND points past:
/// it starts again from the first, and OPTIND says so. Before, OPTIND
/// stayed where the last loop left it.
#[test]
fn getopts_starts_again_after_set() {
    like_bash(
        "set -- -h -c foo x; while getopts hc: o; do echo $o; done; echo $OPTIND; \
         set --; while getopts hc: o; do echo $o; done; echo $OPTIND; \
         set -- -h; while getopts h o; do echo again $o; done; echo $OPTIND",
        &[],
        "h\nc\n4\n1\nagain h\n2\n",
        0,
    );
    // OPTIND past fewer new arguments is the end, not a restart; so a
    // function that sets OPTIND ends the loop (bash's getopts9.sub looped
    // for ever).
    like_bash(
        "set -- -a -b -c; while getopts abc o; do echo $o; done; \
         set -- -x; while getopts x o; do echo again $o; done; echo end $OPTIND; \
         f() { OPTIND=4; }; main() { while getopts abc o; do echo $o; f; done; }; OPTIND=1; main -abc",
        &[],
        "a\nb\nc\nend 2\na\n",
        0,
    );
}

/// A word that is only text and an extglob group (`+(a)c`, `@(x y|z)`)
/// is a pattern for pathname expansion. Before, such a word took the
/// plain-word path and stayed as it was.
#[test]
fn extglob_groups_in_plain_words_expand() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["ab", "ac", "bc", "cc", "a b", "foo"] {
        std::fs::write(dir.path().join(f), "").unwrap();
    }
    like_bash_in(
        dir.path(),
        &["-O", "extglob"],
        "echo +(a)c; echo @(a|b)c; echo !(a*|b*|f*); echo @(a b|foo); echo a@(!(b|c))",
        "ac\nac bc\ncc\na b foo\na b\n",
        0,
    );
}

/// `${a[@]:off:len}` of a sparse indexed array counts from index `off`
/// (negative: from the end of the indices), not from the off-th element.
/// Before, the offset was a position.
#[test]
fn slices_of_sparse_arrays_go_by_index() {
    like_bash(
        "a=([0]=v0 [1]=v1 [5]=v5 [6]=v6 [8]=v8 [9]=v9); \
         echo \"[${a[*]:2}] [${a[*]:5:2}] [${a[*]: -5}] [${a[*]: -11}] [${a[*]:10}]\"",
        &[],
        "[v5 v6 v8 v9] [v5 v6] [v5 v6 v8 v9] [] []\n",
        0,
    );
}

/// Inside double quotes a subscript is read as if unquoted
/// (`"${m['k']}"` is key k); `${!a[1]}` goes through element 1. Before,
/// the quotes were part of the key and `${!a[i]}` always used element 0.
#[test]
fn quoted_subscripts_and_indirect_elements() {
    like_bash(
        "declare -A m=([k]=v [a+1]=c); echo \"${m['k']} ${m[\"k\"]} ${m['a+1']}\"; \
         m+=([x]=y); echo \"${m['x']}\"; \
         v1=hello v2=world; a=(v1 v2); echo \"${!a[0]}, ${!a[1]}\"",
        &[],
        "v v c\ny\nhello, world\n",
        0,
    );
}

/// `${x////c}`: a `/` right after the operator is the pattern's first
/// character; `declare +x` unexports; `declare -pa` lists indexed arrays
/// only. Before, the pattern was empty, `+x` was ignored and `-pa` listed
/// everything.
#[test]
fn patsub_slash_unexport_and_declare_pa() {
    like_bash(
        "x=/_/; echo ${x////c} ${x///}; h=/a/b; echo ${h////\\\\/}; \
         export e=1; declare +x e=2; env | grep -c '^e=' || true; echo $e; \
         declare -a ia=(1); declare -A aa=([k]=v); declare -pa | grep -c aa || true; declare -pa | grep -c ia",
        &[],
        "c_c _\n\\/a\\/b\n0\n2\n0\n1\n",
        0,
    );
}

/// `declare -Ar A` makes an empty read-only associative array (the other
/// flags applied after the kind); SHELLOPTS is read-only. Before, `-r` was
/// dropped when the kind changed, and SHELLOPTS could be assigned.
#[test]
fn declare_kind_with_flags_and_readonly_shellopts() {
    like_bash(
        "declare -Ar A; declare -p A | cut -c1-11; declare -ax B; declare -p B | cut -c1-11; \
         (SHELLOPTS=x) 2>/dev/null || echo ro",
        &[],
        "declare -Ar\ndeclare -ax\nro\n",
        0,
    );
}

/// `${a[@]/#/pre-}` and `${a[@]/%/-post}`: an empty anchored pattern
/// (the `/` after `/#` is the separator, unlike after `//`).
#[test]
fn anchored_empty_patterns_prepend_and_append() {
    like_bash(
        "a=(aa bb ''); printf '[%s]' \"${a[@]/#/pre-}\"; echo; printf '[%s]' \"${a[@]/%/-post}\"; echo; \
         x=/_/; echo ${x////c}",
        &[],
        "[pre-aa][pre-bb][pre-]\n[aa-post][bb-post][-post]\nc_c\n",
        0,
    );
}

/// In a pattern (`[[ x = "${a[@]}" ]]`, `${x/"${a[@]}"/r}`) several
/// fields are joined with spaces. Before, they were run together.
#[test]
fn array_fields_in_patterns_are_joined_with_spaces() {
    like_bash(
        "a=('1 3' 5); [[ '1 3 5' = \"${a[@]}\" ]] && echo t1; [[ '1 35' = \"${a[@]}\" ]] || echo f1; \
         set -- 1 '3 5'; [[ \"$@\" = \"${a[@]}\" ]] && echo t2; \
         x='1 3 5'; echo \"${x/\"${a[@]}\"/R}\"",
        &[],
        "t1\nf1\nt2\nR\n",
        0,
    );
}

/// `${a[@]:off:len}` with a negative length is an error for an array, as
/// in bash. Before, it was all the elements from off on.
#[test]
fn negative_slice_length_of_an_array_is_an_error() {
    like_bash(
        "a=(1 2 3 4 5); echo \"${a[@]: 1: -3}\"; echo after",
        &[],
        "",
        1,
    );
}

/// `${x,,pattern}`, `${x^^pattern}`: only the characters the pattern
/// matches change case; `declare -nx` exports the reference itself.
/// Before, a pattern there was a bad substitution, and `-x` exported the
/// target.
#[test]
fn case_change_with_a_pattern_and_exported_namerefs() {
    like_bash(
        "x='AAA ABC DEF'; echo ${x,A}; echo ${x,,A}; y=abc; echo ${y^^[ab]} ${y^[b]}; \
         t=1; declare -nx r=t; env | grep -E '^(r|t)=' | sort",
        &[],
        "aAA ABC DEF\naaa aBC DEF\nABc abc\nr=t\n",
        0,
    );
}

/// In an array literal every value is expanded first, left to right;
/// then each index, seeing the elements assigned before it. Before, each
/// index was evaluated just before its own value.
#[test]
fn array_literal_evaluation_order() {
    like_bash(
        "i=1; a=([100+i++]=$((i++)) [200+i++]=$((i++))); echo ${!a[@]} / ${a[@]}; \
         b=([0]=1+2+3 [b[0]]=10 [b[6]]=hello); echo ${!b[@]} / ${b[@]}; \
         c=(x y z); c=(\"${c[2]}\" \"${c[0]}\"); echo ${c[@]}",
        &[],
        "103 204 / 1 2\n0 6 10 / 1+2+3 10 hello\nz x\n",
        0,
    );
}

/// `declare` refuses an unknown flag (status 2) and takes `--` as the end
/// of its options; `${x:}` is a bad substitution while `${x: }` and
/// `${x::2}` are offset 0. Before, unknown flags were ignored and `${x:}`
/// was the whole value.
#[test]
fn declare_flags_and_empty_slice_offsets() {
    like_bash(
        "declare -@ x 2>/dev/null; echo st=$?; declare -- y=1; echo $y; \
         s=123; echo ${s: } ${s::2}; (echo ${s:}) 2>/dev/null || echo bad",
        &[],
        "st=2\n1\n123 12\nbad\n",
        0,
    );
}

/// `export SHELLOPTS` hands the options, as they are when a command
/// starts, to child shells (bash's, and rush's, which reads them at
/// start). Before, SHELLOPTS was never in a child's environment.
#[test]
fn exported_shellopts_reach_child_shells() {
    let rush_bin = env!("CARGO_BIN_EXE_rush");
    like_bash(
        &format!(
            "export SHELLOPTS; set -o noglob; bash -c 'echo [*]; set -o | grep -w noglob'; \
             {rush_bin} -c 'echo [*]'"
        ),
        &[],
        "[*]\nnoglob         \ton\n[*]\n",
        0,
    );
}

/// Assigning through a nameref to an element sets that element
/// (`declare -n r='m[k]'; r=v`). Before, it made a variable named `m[k]`.
#[test]
fn assigning_through_a_nameref_to_an_element() {
    like_bash(
        "declare -A m=([K]=v); declare -n r='m[\"K\"]'; r=w; echo ${m[K]}; \
         k=K; declare -n s='m[$k]'; s=x; echo ${m[K]}; a=(1 2 3); declare -n e='a[1]'; e=two; echo ${a[@]}",
        &[],
        "w\nx\n1 two 3\n",
        0,
    );
}

/// A run-time index of an indexed array has its `$(…)` expanded before the
/// arithmetic (`declare -n r='a[$(echo 2) + 1]'`). Before, arithmetic saw
/// the `$(`.
#[test]
fn runtime_indices_expand_substitutions() {
    like_bash(
        "a=(zero one two three); declare -n r='a[$(echo 2) + 1]'; echo $r; \
         unset 'a[$(echo 0)]'; echo ${a[@]}",
        &[],
        "three\none two three\n",
        0,
    );
}

/// `set -x` shows `a=(…)` and `a+=(…)` as written. Before, it showed
/// `a=` with element 0.
#[test]
fn xtrace_of_array_assignments() {
    let r = common::rush()
        .args(["-c", "sp=(1); set -x; sp+=(2); a=(x [3]=y)"])
        .output()
        .unwrap();
    let b = common::bash()
        .args(["-c", "sp=(1); set -x; sp+=(2); a=(x [3]=y)"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&r.stderr),
        "+ sp+=(2)\n+ a=(x [3]=y)\n"
    );
    assert_eq!(r.stderr, b.stderr);
}

/// Assigning to a read-only variable abandons the rest of the line, and
/// the script goes on at the next line with status 1 (bash); with `set
/// -e` the shell leaves. Before, rush always left.
#[test]
fn readonly_assignment_abandons_the_line() {
    like_bash(
        "readonly x=1\nx=2; echo same-line\necho st=$?\ndeclare -Ar A\nA[k]=1\necho st=$?",
        &[],
        "st=1\nst=1\n",
        0,
    );
    like_bash("set -e\nreadonly x=1\nx=2\necho not-reached", &[], "", 1);
}

/// `declare -A` on an indexed array (or `-a` on an associative one) is
/// refused and the rest of the line is abandoned; the array stays. Before,
/// it was converted.
#[test]
fn declare_refuses_to_convert_array_kinds() {
    like_bash(
        "declare -a a=(1 2)\ndeclare -A a=([x]=y); echo same-line\necho st=$? ${a[@]}\n\
         declare -A b=([k]=v)\ndeclare -a b=(1 2)\necho st=$? ${b[@]}",
        &[],
        "st=1 1 2\nst=1 v\n",
        0,
    );
}

/// `declare -n ref` on a variable whose value is not a name is refused,
/// and `ref` stays an ordinary variable. Before, it became a nameref that
/// led nowhere.
#[test]
fn nameref_on_an_invalid_value_is_refused() {
    like_bash(
        "ref=1; declare -n ref 2>/dev/null; echo st=$? $ref; ref=foo; echo $ref",
        &[],
        "st=1 1\nfoo\n",
        0,
    );
}

/// `r[0]=x` where `r` is a nameref to an element is an error that leaves
/// the array as it was. Before, it made a variable named `a[0]`.
#[test]
fn indexing_a_nameref_to_an_element_is_an_error() {
    like_bash(
        "a=(X Y Z)\ndeclare -n r='a[0]'\nr[0]=foo 2>/dev/null\necho st=$?\necho ${a[@]}",
        &[],
        "st=1\nX Y Z\n",
        0,
    );
}

/// With `failglob`, a pattern that matches nothing is an error that
/// abandons the rest of the line; the script goes on at the next line
/// (bash). Before, the shell left.
#[test]
fn failglob_abandons_the_line_only() {
    let dir = tempfile::tempdir().unwrap();
    like_bash_in(
        dir.path(),
        &[],
        "shopt -s failglob extglob\necho *.none; echo same-line\necho st=$?\necho @(*)\necho st=$?",
        "st=1\nst=1\n",
        0,
    );
}

/// An async simple command's failure runs no ERR trap in the child (it is
/// the job's status); inside an async group the trap still runs. Before,
/// `false &` ran the trap.
#[test]
fn err_trap_in_async_jobs() {
    like_bash(
        "set -o errtrace\ntrap 'echo line=$LINENO' ERR\nfalse & wait\n{ false; echo async; } & wait",
        &[],
        "line=4\nasync\n",
        0,
    );
}

/// After a function returns, LINENO is the call's line again (an ERR
/// trap for a failed call reports it). Before, it was the last line run
/// inside the function.
#[test]
fn lineno_after_a_function_call() {
    like_bash(
        "trap 'echo line=$LINENO' ERR\nf() {\n  true\n  false\n}\nf\necho after=$LINENO",
        &[],
        "line=6\nafter=7\n",
        0,
    );
}

/// A compound command run in the shell (`for`, `case`, `{ }`) that fails
/// because a command in it failed runs no second ERR trap, and `set -e`
/// does not act on it again; a failed redirection of the compound itself
/// does count. Before, the trap ran again for the compound.
#[test]
fn err_trap_once_per_failed_command() {
    like_bash(
        "trap 'echo line=$LINENO' ERR\nfor y in 1 2; do\n  false\ndone\ncase x in\n  x) false ;;\nesac\n{ false; false; }\necho ok",
        &[],
        "line=3\nline=3\nline=6\nline=8\nline=8\nok\n",
        0,
    );
    like_bash(
        "set -e\nfor i in 1; do false && true; done\necho after\n{ cat; } < /nonexistent 2>/dev/null\necho not-reached",
        &[],
        "after\n",
        1,
    );
}

/// `declare -F name` with `shopt -s extdebug` prints the name, the line
/// the definition starts on, and its file. Before, the name only.
#[test]
fn declare_capital_f_with_extdebug() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lib.sh"), "\n\ng() { :; }\n").unwrap();
    like_bash_in(
        dir.path(),
        &[],
        "shopt -s extdebug\n. ./lib.sh\n\nf () {\n  :\n}\ndeclare -F f\ndeclare -F g\ndeclare -F | sort",
        "f 4 environment\ng 3 ./lib.sh\ndeclare -f f\ndeclare -f g\n",
        0,
    );
}

/// `jobs` and `disown` refuse an unknown flag with status 2, and take
/// `--` as the end of their options.
#[test]
fn jobs_and_disown_flags() {
    like_bash(
        "jobs -z 2>/dev/null; echo $?; disown -q 2>/dev/null; echo $?; \
         sleep 5 & jobs -- %1 >/dev/null; echo $?; kill %1; wait",
        &[],
        "2\n2\n0\n",
        0,
    );
}

/// A here-string's word is expanded as one string: no brace expansion, no
/// field splitting, no globbing, and a newline after it. Before, rush
/// expanded it as a redirection target: `read x y <<< $line` with a space
/// in `$line` failed with "ambiguous redirect", and so did an empty word.
#[test]
fn a_here_string_is_one_string() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f1"), "").unwrap();
    std::fs::write(dir.path().join("f2"), "").unwrap();
    let cases: &[(&str, &str)] = &[
        (
            "line='a b'; read -r x y <<< $line; echo \"[$x][$y]\"",
            "[a][b]\n",
        ),
        ("e=; cat <<< $e | od -An -c", "  \\n\n"),
        ("cat <<< *", "*\n"),
        ("read q <<< x{1,2}y; echo $q", "x{1,2}y\n"),
        (
            "set -- '1  2' 3; cat <<< \"$@\"; cat <<< $@",
            "1  2 3\n1  2 3\n",
        ),
        ("IFS=:; v=a:b; cat <<< $v", "a:b\n"),
        ("x='  lead  trail  '; cat <<< $x", "  lead  trail  \n"),
        ("a=(p q r); cat <<< ${a[@]}", "p q r\n"),
        // A redirection target still splits and globs: one file is fine.
        ("echo hi > f*1; cat f1", "hi\n"),
    ];
    for (script, out) in cases {
        like_bash_in(dir.path(), &[], script, out, 0);
    }
    // More than one field is still ambiguous for a file.
    like_bash_in(
        dir.path(),
        &[],
        "echo hi > f* 2>/dev/null; echo $?; v='a b'; echo > $v 2>/dev/null; echo $?",
        "1\n1\n",
        0,
    );
}

/// bash's own variables are real variables with bash's attributes:
/// arithmetic reads BASH_VERSINFO's elements (it read 0 before, so the
/// usual "needs Bash >= 3.2" guard stopped real programs), `declare -p`
/// and `${!prefix@}` see them, `unset` takes what is special away, and
/// `RANDOM=seed` gives bash's own sequence.
#[test]
fn bash_variables_are_real_variables() {
    let cases: &[(&str, &str)] = &[
        (
            "((BASH_VERSINFO[0] < 3 || (BASH_VERSINFO[0] == 3 && BASH_VERSINFO[1] < 2))) && echo old || echo new",
            "new\n",
        ),
        (
            "echo $((BASH_VERSINFO[0] >= 5)) ${#BASH_VERSINFO[@]}",
            "1 6\n",
        ),
        (
            "declare -p BASH_VERSINFO | cut -c1-26",
            "declare -ar BASH_VERSINFO=\n",
        ),
        ("BASH_VERSINFO=1 2>/dev/null\necho $?", "1\n"),
        ("echo ${!BASH_VERSI@}", "BASH_VERSINFO BASH_VERSION\n"),
        (
            "echo ${!UI@}; declare -p UID | cut -c1-16",
            "UID\ndeclare -ir UID=\n",
        ),
        (
            "for v in RANDOM SRANDOM SECONDS BASHPID; do declare -p $v | cut -c1-11; done",
            "declare -i \ndeclare -i \ndeclare -i \ndeclare -i \n",
        ),
        (
            "declare -p HOSTTYPE MACHTYPE OSTYPE | cut -d= -f1",
            "declare -- HOSTTYPE\ndeclare -- MACHTYPE\ndeclare -- OSTYPE\n",
        ),
        ("declare -p GROUPS | cut -c1-17", "declare -a GROUPS\n"),
        ("echo $((GROUPS[0] == $(id -g)))", "1\n"),
        (
            "RANDOM=5; echo $RANDOM $RANDOM $RANDOM",
            "18498 29338 982\n",
        ),
        ("unset RANDOM; RANDOM=5; echo $RANDOM $RANDOM", "5 5\n"),
        (
            "SECONDS=100; echo $((SECONDS >= 100 && SECONDS < 110))",
            "1\n",
        ),
        (
            "echo $BASH_SUBSHELL $(echo $BASH_SUBSHELL) $( (echo $BASH_SUBSHELL) ); (echo $BASH_SUBSHELL); echo $BASH_SUBSHELL | cat",
            "0 1 2\n1\n0\n",
        ),
        (
            "true | false | true; echo ${PIPESTATUS[-2]} ${#PIPESTATUS[@]}",
            "1 3\n",
        ),
        (
            "alias ll='ls -l'; echo ${BASH_ALIASES[ll]} ${!BASH_ALIASES[@]}; declare -p BASH_ALIASES",
            "ls -l ll\ndeclare -A BASH_ALIASES=([ll]=\"ls -l\" )\n",
        ),
        ("set | grep -c '^BASH_VERSINFO='", "1\n"),
        (
            "f() { declare -p FUNCNAME; }; f",
            "declare -a FUNCNAME=([0]=\"f\")\n",
        ),
    ];
    for (script, out) in cases {
        like_bash(script, &[], out, 0);
    }
}

/// `export -f` hands functions to children as bash does
/// (`BASH_FUNC_name%%=() { …; }`), and rush imports them: bash to rush,
/// rush to bash, rush to rush. An entry that is more than one function
/// definition is refused and nothing of it runs. Before, rush neither
/// wrote nor read them.
#[test]
fn exported_functions_round_trip() {
    let rush = env!("CARGO_BIN_EXE_rush");
    let cases = [
        format!("f() {{ echo \"hi $1\"; echo two; }}; export -f f; {rush} -c 'f there'"),
        "f() { echo \"hi $1\"; echo two; }; export -f f; bash -c 'f there'".to_string(),
        format!(
            "f() {{ echo \"hi $1\"; echo two; }}; export -f f; f() {{ echo new; }}; {rush} -c 'f there'"
        ),
        format!(
            "f() {{ echo x; }}; export -f f; export -fn f; {rush} -c 'f 2>/dev/null || echo gone'"
        ),
        format!(
            "f() {{ echo x; }}; export -f f; unset -f f; {rush} -c 'f 2>/dev/null || echo gone'"
        ),
        format!("f() {{ echo fx; }}; declare -fx f; {rush} -c f"),
    ];
    let outs = [
        "hi there\ntwo\n",
        "hi there\ntwo\n",
        "new\n",
        "gone\n",
        "gone\n",
        "fx\n",
    ];
    for (script, out) in cases.iter().zip(outs) {
        like_bash(script, &[], out, 0);
    }
    // Written by bash, read by rush.
    let o = bash()
        .args([
            "-c",
            &format!("f() {{ echo \"from bash $1\"; }}; export -f f; {rush} -c 'f x'"),
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), "from bash x\n");
    // Shellshock: text after the definition never runs, and the function
    // is not defined; a value that is not a definition is left alone.
    for value in [
        "() { echo g; }; echo INJECTED",
        "() { echo g; }\necho INJECTED",
        "echo x",
    ] {
        let o = std::process::Command::new(rush)
            .args(["-c", "g 2>/dev/null || echo no-g"])
            .env("BASH_FUNC_g%%", value)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&o.stdout), "no-g\n", "{value:?}");
    }
}

/// Under job control, `wait` returns for a job that stops (128 + the
/// signal) and `wait` for all skips stopped jobs; `jobs` says `Stopped`
/// for SIGSTOP as bash does. Before, `wait` blocked for ever on a stopped
/// job, and `jobs` said "Stopped (Stopped (signal))".
#[test]
fn wait_returns_for_a_stopped_job() {
    like_bash(
        "set -m; sleep 30 & kill -STOP $!; wait %1; echo st=$?; \
         sleep 31 & kill -STOP $!; wait; echo all; jobs; kill -9 %1 %2",
        &[],
        "st=147\nall\n[1]-  Stopped                 sleep 30\n[2]+  Stopped                 sleep 31\n",
        0,
    );
}

/// The builtins rush lacked that bash 5.2's `enable -a` lists: `enable`
/// (turning a builtin off and on), `help`, `logout`, `suspend` and `fc`
/// (over the history of a script under `set -o history`). A builtin's
/// usage line is written bare, as bash writes it (bash-completion parses
/// `declare --usage`).
#[test]
fn enable_help_logout_suspend_and_fc() {
    let cases: &[(&str, &str)] = &[
        (
            "enable -n echo; type -t echo; enable echo; type -t echo",
            "file\nbuiltin\n",
        ),
        ("enable nosuch 2>/dev/null; echo $?", "1\n"),
        // Loadable builtins: refused with a message, as bash refuses a
        // file it cannot load.
        ("enable -f ./nosuch.so x 2>/dev/null; echo $?", "1\n"),
        (
            "enable -n test; enable -n; enable test; enable -n",
            "enable -n test\n",
        ),
        (
            "help -s cd declare",
            "cd: cd [-L|[-P [-e]] [-@]] [dir]\ndeclare: declare [-aAfFgiIlnrtux] [name[=value] ...] or declare -p [-aAfFilnrtux] [name ...]\n",
        ),
        ("help nosuch 2>/dev/null; echo $?", "1\n"),
        (
            "logout 2>&1 | sed 's/.*logout:/logout:/'; logout 2>/dev/null; echo $?",
            "logout: not login shell: use `exit'\n1\n",
        ),
        ("suspend 2>/dev/null; echo $?", "1\n"),
        (
            "declare --usage 2>&1 | tail -n 1",
            "declare: usage: declare [-aAfFgiIlnrtux] [name[=value] ...] or declare -p [-aAfFilnrtux] [name ...]\n",
        ),
    ];
    for (script, out) in cases {
        like_bash(script, &[], out, 0);
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("fc.sh"),
        "set -o history; echo a\necho c\nfc -l\nfc -ln -2\nfc -s c=z 2>/dev/null\nfc -s ech\nfc -l -3 -1\nfc -lr 1 2\nfc -l 99\n",
    )
    .unwrap();
    // `help -d` and `-m`: rush's own one-line descriptions (bash's text
    // differs), with the synopsis.
    let o = rush()
        .args(["-c", "help -d cd; help -m cd"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "cd - Change the working directory.\nNAME\n    cd - Change the working directory.\n\n\
         SYNOPSIS\n    cd [-L|[-P [-e]] [-@]] [dir]\n\n"
    );
    // `fc -e EDITOR`: the editor runs on the previous command, which is
    // then written to stderr and run, and takes the `fc` line's place.
    std::fs::write(
        dir.path().join("fce.sh"),
        "set -o history; echo a\necho b\nfc -e true\nfc -l -2\n",
    )
    .unwrap();
    for mut shell in [rush(), bash()] {
        let o = shell
            .arg("fce.sh")
            .current_dir(dir.path())
            .env("HISTFILE", "/dev/null")
            .output()
            .unwrap();
        assert_eq!(
            (
                String::from_utf8_lossy(&o.stdout).as_ref(),
                String::from_utf8_lossy(&o.stderr).as_ref()
            ),
            ("a\nb\nb\n1\t echo b\n2\t echo b\n", "echo b\n")
        );
    }
    let want = "a\nc\n1\t echo c\n\t echo c\n\t fc -l\nc\n3\t fc -ln -2\n4\t fz -ln -2\n5\t echo c\n2\t fc -l\n1\t echo c\n1\t echo c\n2\t fc -l\n3\t fc -ln -2\n4\t fz -ln -2\n5\t echo c\n6\t fc -l -3 -1\n7\t fc -lr 1 2\n";
    for mut shell in [rush(), bash()] {
        let o = shell
            .arg("fc.sh")
            .current_dir(dir.path())
            .env("HISTFILE", "/dev/null")
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            want,
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// `wait PID` for one job leaves the other jobs that already ended in the
/// table, with their statuses, for their own `wait` (the Oils case "wait
/// for N parallel jobs and check failure"; a `wait` that took every ended
/// job away said "pid N is not a child of this shell" and 127). And the
/// environment may set HOSTNAME, OSTYPE, HOSTTYPE and MACHTYPE.
#[test]
fn wait_keeps_other_ended_jobs_and_the_environment_sets_hostname() {
    like_bash(
        "for i in 3 2 1; do { sleep 0.0$i; exit $i; } & pids=\"$pids $!\"; done; \
         for pid in $pids; do wait $pid; echo status=$?; done",
        &[],
        "status=3\nstatus=2\nstatus=1\n",
        0,
    );
    let o = rush()
        .args(["-c", "echo $HOSTNAME $OSTYPE $HOSTTYPE $MACHTYPE"])
        .env("HOSTNAME", "h")
        .env("OSTYPE", "o")
        .env("HOSTTYPE", "t")
        .env("MACHTYPE", "m")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), "h o t m\n");
}

/// bash (outside POSIX mode) expands the tildes of an argument that looks
/// like an assignment, after its `=` and each `:` (bash's tests/tilde).
#[test]
fn tildes_in_assignment_like_arguments() {
    let cases = [
        (
            "HOME=/h; echo a=~ a=~/x:~:b x=a:~ 1a=~ \"a\"=~ a=~\"x\"",
            "a=/h a=/h/x:/h:b x=a:/h 1a=~ a=~ a=~x\n",
        ),
        ("HOME=/h; set -o posix; echo a=~ b=x:~", "a=~ b=x:~\n"),
    ];
    for (script, out) in cases {
        like_bash(script, &[], out, 0);
    }
}

/// Under `shopt -s extdebug`, a DEBUG trap that returns non-zero skips the
/// command, and one that returns 2 in a function returns from it (bash's
/// tests/dbg-support2).
#[test]
fn extdebug_lets_the_debug_trap_skip_a_command() {
    like_bash(
        "shopt -s extdebug; skip() { [[ $BASH_COMMAND == *2* ]] && return 1; return 0; }; \
         trap skip DEBUG; x=1; x=2; echo x=$x",
        &[],
        "x=1\n",
        0,
    );
    like_bash(
        "shopt -s extdebug; f() { echo in; echo not; }; \
         trap '[[ $BASH_COMMAND == \"echo not\" ]] && return 2; true' DEBUG; f; echo after",
        &[],
        "in\nafter\n",
        0,
    );
    like_bash(
        "skip() { return 1; }; trap skip DEBUG; x=1; echo x=$x",
        &[],
        "x=1\n",
        0,
    );
}

/// With stdin or stdout closed, a pipe's ends must not take their numbers:
/// the child that moves its pipe end to 0 or 1 would close it (bash's
/// tests/lastpipe, `exec 0<&-; echo x | read x`).
#[test]
fn pipelines_work_with_the_standard_fds_closed() {
    like_bash(
        "exec 0<&-; echo x | cat; echo y | cat | cat; echo $(echo w); \
         shopt -s lastpipe; echo v | read v; echo v=$v; exec 1>&-; echo z | cat >&2",
        &[],
        "x\ny\nw\nv=v\n",
        0,
    );
}

/// Brace expansion works on the text before names are found: `$v{x,y}` is
/// `$vx $vy`, while `${v}{x,y}` is `${v}x ${v}y`; a backslash in a letter
/// range is an empty word (bash's tests/braces).
#[test]
fn brace_expansion_before_names() {
    like_bash(
        "v=V vx=X vy=Y; echo $v{x,y} ${v}{x,y} \"$v\"{x,y} $v{-,+}; echo {Z..a}",
        &[],
        "X Y Vx Vy Vx Vy V- V+\nZ [  ] ^ _ ` a\n",
        0,
    );
}

/// `$BASH_COMMAND` is the command running now (in a function, the
/// function's command), in an ERR or EXIT trap the last one begun; and an
/// assignment to BASH_ARGV0 sets `$0` (bash's tests/dynvar).
#[test]
fn bash_command_and_bash_argv0() {
    like_bash(
        "trap 'echo err: $BASH_COMMAND' ERR; false x; trap 'echo exit: $BASH_COMMAND' EXIT; \
         f() { echo \"in f: $BASH_COMMAND\"; }; f 1; echo $BASH_COMMAND; \
         BASH_ARGV0=zz; echo $0 $BASH_ARGV0; echo last",
        &[],
        "err: false x\nin f: echo \"in f: $BASH_COMMAND\"\necho $BASH_COMMAND\nzz zz\nlast\nexit: echo last\n",
        0,
    );
}

/// `set` and `set -x` quote a value only when it holds a character
/// special to the shell (`#` only first, `~` only where it expands), and a
/// lone `'` as `\'`; `alias` and `trap -p` always single-quote (bash's
/// tests/posix2).
#[test]
fn set_quotes_values_as_bash_does() {
    like_bash(
        "a=\"'\" b='ab#cd' c='#ab' d='~' e='a~' f='x=~' g='a b' i= n=a=b o=a:b q='a^b'; \
         set | grep '^[a-q]='; alias l=ls; alias; trap ls USR1; trap -p USR1; \
         set -x; : \"'\" a#b '' a~ 'a b' '#'",
        &[],
        "a=\\'\nb=ab#cd\nc='#ab'\nd='~'\ne=a~\nf='x=~'\ng='a b'\ni=\nn=a=b\no=a:b\nq='a^b'\n\
         alias l='ls'\ntrap -- 'ls' SIGUSR1\n",
        0,
    );
    let o = rush()
        .args(["-c", "set -x; : \"'\" a#b '' a~ 'a b' '#'"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "+ : \\' a#b '' a~ 'a b' '#'\n"
    );
}

/// `declare -f` prints what bash prints (its `print_cmd.c` layout): `;`
/// after each command but the last of a function, after the last of a
/// loop or `if` body, `elif` as a nested `if`, `for x` as `for x in "$@"`,
/// and here-documents with their own delimiters, their bodies after the
/// connector (bash's tests/herestr, cprint, func).
#[test]
fn declare_f_prints_what_bash_prints() {
    let script = r#"f() { echo a & echo b
if true; then echo c; elif x; then :; else echo d; fi
while false; do :; done; x=1
case a in a) echo 1; echo 2;; b) ;; esac
{ echo in; }; ( echo sub; echo s2 )
cat <<END
body
END
echo after; }
g() { cat <<< x ${x} $1 ${1}; for y; do :; done; cat <<-A | cat <<'B'
	a
	A
b
B
}
declare -f f g"#;
    like_bash(
        script,
        &[],
        "f () \n{ \n    echo a & echo b;\n    if true; then\n        echo c;\n    else\n        \
         if x; then\n            :;\n        else\n            echo d;\n        fi;\n    fi;\n    \
         while false; do\n        :;\n    done;\n    x=1;\n    case a in \n        a)\n            \
         echo 1;\n            echo 2\n        ;;\n        b)\n\n        ;;\n    esac;\n    {\x20\n        \
         echo in\n    };\n    ( echo sub;\n    echo s2 );\n    cat <<END\nbody\nEND\n\n    echo after\n}\n\
         g () \n{ \n    cat ${x} $1 ${1} <<< x;\n    for y in \"$@\";\n    do\n        :;\n    done;\n    \
         cat <<-A |\na\nA\n  cat <<'B'\nb\nB\n\n}\n",
        0,
    );
}

/// From bash's tests/func: a function's own local stays local when unset
/// (a caller's is removed); `declare -xF` lists only exported functions;
/// `>&2` prints as `1>&2` and a subshell body keeps its redirections;
/// outside POSIX mode a special builtin's prefix assignment lasts for the
/// command only; FUNCNEST limits the nesting.
#[test]
fn functions_as_bash_tests_them() {
    let cases = [
        (
            "f() { local -i x=1; unset x; x=1+1; echo $x; }; f; \
             g() { local y=1; h; echo \"g: ${y-unset}\"; }; h() { unset y; }; y=G; g",
            "1+1\ng: G\n",
        ),
        (
            "a() { :; }; b() { :; }; export -f b; declare -xF; declare -F",
            "declare -fx b\ndeclare -f a\ndeclare -fx b\n",
        ),
        (
            "f() { echo >&2; echo <&-; echo >&$x; } >&2; g() ( echo ) 2>&1; declare -f f g",
            "f () \n{ \n    echo 1>&2;\n    echo 0>&-;\n    echo >&$x\n} 1>&2\n\
             g () \n{ \n    ( echo ) 2>&1\n}\n",
        ),
        (
            "x=1; x=2 :; echo $x; FOO=bar eval 'echo $FOO'; echo \"[$FOO]\"; set -o posix; x=3 :; echo $x",
            "1\nbar\n[]\n3\n",
        ),
        (
            "FUNCNEST=5; n=0; f() { ((n++)); f; }; f 2>/dev/null; echo not reached\necho $? $n",
            "1 5\n",
        ),
    ];
    for (script, out) in cases {
        like_bash(script, &[], out, 0);
    }
}

/// `${x:=word}` expands a leading tilde in the word as `${x:-word}` does
/// (bash's tests/tilde2).
#[test]
fn assign_default_expands_a_leading_tilde() {
    like_bash(
        "HOME=/h; X=/x; : ${A:=~/bin:~/b2:$X}; echo $A; : ${B:=~}; echo $B; : \"${C:=~/b}\"; echo $C",
        &[],
        "/h/bin:~/b2:/x\n/h\n~/b\n",
        0,
    );
}

/// `{name}>file` (bash): the shell opens the lowest free fd from 10,
/// assigns its number to name and leaves it open; `{name}>&-` closes it.
/// A failed redirection on a special builtin ends the shell in POSIX mode
/// only, and a bad fd is named as written (bash's tests/vredir,
/// comsub-posix).
#[test]
fn redirections_that_assign_the_fd() {
    let dir = tempfile::tempdir().unwrap();
    like_bash_in(
        dir.path(),
        &[],
        "exec {fd}>out; [ $fd -ge 10 ] && echo ok; echo hello >&$fd; exec {fd}>&-; cat out; \
         echo x {g}>/dev/null; [ -e /dev/fd/$g ] && echo open; exec {h}<<<here; read l <&$h; echo $l; \
         f() { echo a {q}>/dev/null; }; declare -f f; \
         readonly v; exec {v}>/dev/null; echo status $?; x=99; echo >&$x; echo after",
        "ok\nhello\nx\nopen\nhere\nf () \n{ \n    echo a {q}> /dev/null\n}\nstatus 1\nafter\n",
        0,
    );
    let o = rush()
        .args(["-c", "readonly v; exec {v}>/dev/null; x=99; echo >&$x"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .map(|l| l.split_once(": ").map_or(l, |(_, m)| m))
            .collect::<Vec<_>>(),
        [
            "line 1: v: readonly variable",
            "line 1: v: cannot assign fd to variable",
            "line 1: $x: Bad file descriptor"
        ]
    );
}

/// From bash's tests/exportfunc: a function named with `=` or `/` cannot
/// be exported; "command not found" goes where the command's redirections
/// send stderr; more than 16 here-documents on a line are refused; a
/// syntax error at the end of an eval'd string is on the line after.
#[test]
fn exportfunc_details() {
    let dir = tempfile::tempdir().unwrap();
    like_bash_in(
        dir.path(),
        &[],
        "function foo=bar { :; }; export -f 'foo=bar'; echo status $?; \
         nosuch 2>/dev/null; echo $?; printf 'echo from-script\\n' > s; chmod +x s; ./s > o; cat o",
        "status 1\n127\nfrom-script\n",
        0,
    );
    let heredocs = format!(
        "cat {}\n{}echo after\n",
        "<<E ".repeat(17),
        "E\n".repeat(17)
    );
    let o = output_with_input(rush().stderr(std::process::Stdio::piped()), &heredocs);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("maximum here-document count exceeded"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = output_with_input(
        rush().stderr(std::process::Stdio::piped()),
        "true\neval 'if true'\n",
    );
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .ends_with("eval: line 3: syntax error: unexpected end of file\n"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Quoting details from bash's tests/quote: a line continuation inside
/// backquotes goes before the command is read, even inside its single
/// quotes; in a double-quoted `${x//p/r}` a backslash in the replacement
/// quotes any character and is removed.
#[test]
fn backquote_continuations_and_replacement_escapes() {
    like_bash(
        "echo `echo 'foo\\\nbar'`; echo \"`echo 'a\\\nb'`\"; x=ab; \
         echo \"${x//a/\\z}\" \"${x//a/\\\\}\" \"${x//a/\\$}\" \"${x:-\\z}\"; \
         q=\"a'b'c\"; echo \"${q//\\'/\\'}\"; y='a&b'; echo \"${y//a/\\&}\"",
        &[],
        "foobar\nab\nzb \\b $b ab\na'b'c\n&&b\n",
        0,
    );
}

/// DEBUG and ERR traps run inside the other traps' actions (each never
/// inside its own), and a signal's action counts its lines from 1, as in
/// bash (the Oils cases "Combine DEBUG trap and ERR trap" and "Combine
/// DEBUG trap and USR1 trap").
#[test]
fn debug_and_err_traps_run_inside_other_traps() {
    like_bash(
        "trap 'false; echo $LINENO err' ERR\ntrap 'false; echo $LINENO debug' DEBUG\n\
         false\necho after=$?",
        &[],
        "3 err\n3 debug\n3 debug\n3 debug\n3 err\n4 err\n4 debug\nafter=1\n",
        0,
    );
    like_bash(
        "trap 'false; echo $LINENO usr1' USR1\ntrap 'false; echo $LINENO dbg' DEBUG\n\
         kill -USR1 $$\necho after=$?",
        &[],
        "3 dbg\n1 dbg\n1 dbg\n1 usr1\n4 dbg\nafter=0\n",
        0,
    );
}

/// An array assigned through a nameref to an element (`declare -n
/// r='a[@]'; r=(x)`) is refused, as bash refuses it (the Oils case "a[@]
/// in nameref").
#[test]
fn array_through_a_nameref_to_an_element_is_refused() {
    like_bash(
        "typeset -n ref='a[@]'; a=('A B' C); echo \"$ref\"\nref=(X Y Z)\necho status=$?; \
         echo \"${#ref[@]}\" \"${a[@]}\"",
        &[],
        "A B C\nstatus=1\n0 A B C\n",
        0,
    );
}

/// getopts as bash's tests/getopts checks it: a function with its own
/// OPTIND has its own place in the arguments (assigning OPTIND starts
/// afresh), messages are `$0: …` with no line, an invalid option to
/// getopts itself is refused, and a bad variable name still takes the
/// option.
#[test]
fn getopts_in_functions_and_its_messages() {
    like_bash(
        "f() { typeset OPTIND=1; typeset opt; while getopts :abcxyz opt; do echo \"opt: $opt\"; \
         if [[ $opt = y ]]; then f -abc; fi; done; }; f -xyz; \
         set -- -a x; getopts b-c o-v; echo $? $OPTIND; getopts -a; echo $?",
        &[],
        "opt: x\nopt: y\nopt: a\nopt: b\nopt: c\nopt: z\n1 2\n2\n",
        0,
    );
    let o = rush()
        .args([
            "-c",
            "getopts a o -z; OPTIND=1; getopts b: o -b; OPTIND=1; OPTERR=0 getopts a o -q",
            "NAME",
        ])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "NAME: illegal option -- z\nNAME: option requires an argument -- b\n"
    );
}

/// In the replacement of `"${x//p/r}"`, single quotes quote as they do
/// outside double quotes (bash 5.2; tests/quote).
#[test]
fn single_quotes_in_a_double_quoted_replacement() {
    like_bash(
        r#"t="a'b"; printf '%s\n' "${t//"'"/'x'}" "${t//"'"/'\'}" "${t//"'"/\'\\'\'}" "${t:-'x'}""#,
        &[],
        "axb\na\\b\na'\\\\b\na'b\n",
        0,
    );
}

/// In POSIX mode a special builtin's prefix assignment to a variable that
/// the function's own call bound (`v=30 f`) reaches the caller; a plain
/// assignment to it does not (bash's tests/func, func3.sub).
#[test]
fn posix_special_builtin_assignment_through_a_function_prefix() {
    like_bash(
        "set -o posix; v=0; f() { v=20 return 5; }; v=30 f; echo $? $v; \
         g() { v=7; }; v=1 g; echo ${v-unset}; \
         h() { local v=1; v=2 :; }; h; echo $v",
        &[],
        "5 20\n20\n20\n",
        0,
    );
}

/// getopts and a readonly OPTARG: setting it is an error that getopts
/// reports and survives; at the end of the options OPTARG goes even when
/// readonly (bash's tests/getopts, getopts10.sub).
#[test]
fn getopts_with_a_readonly_optarg() {
    like_bash(
        "readonly OPTARG=5; set -- -a b; getopts :x x 2>/dev/null; echo $? $x $OPTARG; \
         getopts x x; echo $? $x ${OPTARG-unset}",
        &[],
        "0 ? 5\n1 ? unset\n",
        0,
    );
    let o = rush()
        .args(["-c", "readonly OPTARG; getopts :x x -a", "NAME"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "NAME: line 1: OPTARG: readonly variable\n"
    );
}

/// Aliases as bash's tests/alias and tests/comsub use them: not expanded
/// in a script until `shopt -s expand_aliases`; an alias that names
/// itself through others stops (it crashed rush's parser); an alias to a
/// comment or to nothing leaves no command; the word after an alias ending
/// in a blank is expanded through a chain; digits ending an alias are a
/// word, not a redirection's fd; an alias may close a group in `$( )`.
#[test]
fn aliases_in_scripts_as_bash_expands_them() {
    like_bash(
        "alias e=echo\ne hi 2>/dev/null || echo off\n",
        &[],
        "off\n",
        0,
    );
    like_bash(
        "shopt -s expand_aliases\nalias a=b b=c c=a\na 2>/dev/null; echo $?\n\
         alias self=self\nself 2>/dev/null; echo $?\n\
         alias c=# n=\nfalse; c\necho $?\nfalse; n\necho $?\n\
         alias foo='echo ' bar=baz baz=quux\nfoo bar\n\
         alias z='echo 0'\nz>&2\n\
         alias DO='{ ' DONE='}'\ngot=$(DO\necho ok 9; DONE)\necho \"$got\"\n",
        &[],
        "127\n127\n1\n1\nquux\nok 9\n",
        0,
    );
}

/// The line of a simple command is where the token after its first word
/// ends, as bash counts it (`cmd \` then its arguments on the next line
/// run on that line), and a command substitution counts its lines from
/// there.
#[test]
fn lines_of_commands_that_span_lines() {
    like_bash(
        "echo \"a\nb\" $LINENO\necho \\\n$LINENO\nx=$LINENO\\\n$LINENO; echo $x\n\
         echo $(echo $LINENO\necho $LINENO)\necho $LINENO $(echo $LINENO\necho $LINENO)\n",
        &[],
        "a\nb 2\n4\n66\n8 9\n9 9 10\n",
        0,
    );
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("s.sh"),
        "nosuch \\\n  --flag\necho `echo\nnosuch2`\n",
    )
    .unwrap();
    let o = rush().arg("s.sh").current_dir(d.path()).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "s.sh: line 2: nosuch: command not found\ns.sh: line 5: nosuch2: command not found\n"
    );
}

/// `name='(…)'` as one argument of `declare -a`/`-A`, `local -a`,
/// `readonly -a` or `export -a` (or of `declare` to an array) is a
/// compound assignment, read and expanded again; a plain value with `-a`
/// is element 0; a readonly name is refused with the builtin's name, and
/// the shell goes on (bash's tests/attr).
#[test]
fn quoted_compound_assignments_in_declarations() {
    // An empty folder, so that `*.nomatch` stays a word.
    let d = tempfile::tempdir().unwrap();
    like_bash_in(
        d.path(),
        &[],
        "declare -a t='(8 \"9 0\")'; declare -p t; readonly -a x='([2]=4)'; declare -p x; \
         export -a s='(7)'; declare -p s; declare -A m='([k]=v)'; declare -p m; \
         declare u='(1)'; declare -p u; a=(1); declare a='(5 6)'; declare -p a; \
         b=(1); readonly b='(5 6)'; declare -p b; \
         f() { local -a l='($1 \"a b\")'; declare -p l; local -a q=z; declare -p q; }; f one; \
         declare -a g=\"(\\$(echo x y) *.nomatch)\"; declare -p g; declare -a k='(a'; declare -p k; \
         readonly w=1; readonly -a 'w=(4)' 2>/dev/null; echo $?; export -a 'w=(4)' 2>/dev/null; echo $?",
        "declare -a t=([0]=\"8\" [1]=\"9 0\")\ndeclare -ar x=([2]=\"4\")\ndeclare -ax s=([0]=\"7\")\n\
         declare -A m=([k]=\"v\" )\ndeclare -- u=\"(1)\"\ndeclare -a a=([0]=\"5\" [1]=\"6\")\n\
         declare -ar b=([0]=\"(5 6)\")\ndeclare -a l=([0]=\"one\" [1]=\"a b\")\n\
         declare -a q=([0]=\"z\")\ndeclare -a g=([0]=\"x\" [1]=\"y\" [2]=\"*.nomatch\")\n\
         declare -a k=([0]=\"(a\")\n1\n1\n",
        0,
    );
    let o = rush()
        .args(["-c", "readonly w=1; readonly -a 'w=(4)'; echo on", "NAME"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "NAME: line 1: readonly: w: readonly variable\n"
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), "on\n");
}

/// `$'…'` as bash's tests/nquote* check it: `\c?` is DEL and `\c\\`
/// takes both backslashes, `\x{…}` takes any number of digits, a NUL ends
/// the string; inside `${…}` within double quotes `$'…'` is ANSI-C
/// quoting (extquote), in a here-document only in patterns and
/// replacements; an alias's newlines are not lines of the script.
#[test]
fn ansi_c_quoting_as_bash_reads_it() {
    like_bash(
        "printf '%s\\n' $'\\c?' $'\\c\\\\\\\\x' $'a\\x{41}b' $'\\x{01234567}' $'\\x{cde' $'ab\\0cd' \
         $'ab\\x{}cd' | od -An -c; \
         v=\"'\"; x=; printf '%s\\n' \"${v/$'\\''/$'\\x41'}\" \"${x:-$'\\t'}\" | od -An -c; \
         V=ab; cat <<EOF\n${V/a/$'\\x41'}\n${V/$'\\x61'/X}\n${V:+$'\\x41'}\nEOF\n",
        &[],
        " 177  \\n 034   \\   x  \\n   a   A   b  \\n   g  \\n 336  \\n   a   b\n  \\n   a   b  \\n\n   A  \\n  \\t  \\n\nAb\nXb\n$'\\x41'\n",
        0,
    );
    like_bash(
        "shopt -s expand_aliases\nalias foo=$'echo foo\\n\\necho $LINENO\\n'\nfoo\necho $LINENO\n",
        &[],
        "foo\n3\n4\n",
        0,
    );
}

/// `hash` as bash keeps it: `-p` remembers a path, `-d` forgets one, `-t`
/// and `-l` print them, hits count each lookup, the listing is in bash's
/// order; `type` says "hashed", `-P` searches even for a builtin, `-f`
/// skips functions, the old `-type` still works, and aliases count only
/// while they are expanded (bash's tests/type). The remembered path
/// need not exist: `type -P` answers it as it is.
#[test]
fn hash_table_and_type_as_bash_reports_them() {
    like_bash(
        "hash -p /no/such/dir/x x; hash -p /bin/sh sh; hash; type x; type -p x; type -P x; hash -t x; \
         hash -t x sh; hash -l; hash -d x; hash -t x 2>/dev/null || echo gone; hash -r; hash; \
         type; echo $?; type -P echo; f() { :; }; type -f -t f 2>/dev/null || echo none; \
         type -type f; alias m=more; type -t m || echo no-alias; shopt -s expand_aliases; type -t m",
        &[],
        "hits\tcommand\n   0\t/no/such/dir/x\n   0\t/bin/sh\nx is hashed (/no/such/dir/x)\n/no/such/dir/x\n/no/such/dir/x\n/no/such/dir/x\n\
         x\t/no/such/dir/x\nsh\t/bin/sh\nbuiltin hash -p /no/such/dir/x x\nbuiltin hash -p /bin/sh sh\ngone\n\
         hash: hash table empty\n0\n/usr/bin/echo\nnone\nfunction\nno-alias\nalias\n",
        0,
    );
}

/// `[k]+=v` inside `name=(…)` appends to the element (adds, for an
/// integer array); `typeset -i x+=5` adds; POSIXLY_CORRECT turns POSIX
/// mode on when assigned (even empty) or inherited, off when unset, and
/// `set -o posix` sets it (bash's tests/appendop).
#[test]
fn element_appends_and_posixly_correct() {
    like_bash(
        "x=(1 2 3 4 5); typeset -i x; x+=( [3]+=9 [5]=9 ); echo ${x[@]}; \
         y=(a b); y+=([1]+=c [3]+=d); echo ${y[@]}; declare -A m=([k]=v); m+=([k]+=w); \
         echo ${m[k]}; z=( 1 2 [2]+=7 4 5 ); echo ${z[@]}; \
         unset x; typeset x+=4; typeset -i x+=5; echo $x; readonly x+=7; echo $x; \
         set -o posix; echo ${POSIXLY_CORRECT-unset}; set +o posix; echo ${POSIXLY_CORRECT-unset}; \
         POSIXLY_CORRECT=; shopt -oq posix && echo on; q=2; q+=5 eval :; echo $q; \
         unset POSIXLY_CORRECT; shopt -oq posix || echo off",
        &[],
        "1 2 3 13 5 9\na bc d\nvw\n1 2 7 4 5\n9\n16\ny\nunset\non\n25\noff\n",
        0,
    );
    let o = rush()
        .args(["-c", "shopt -oq posix && echo on"])
        .env("POSIXLY_CORRECT", "1")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), "on\n");
}

/// Associative arrays as bash lists them (its hash table's order, not the
/// keys sorted), `declare -A m` shown without `=()` until assigned,
/// `declare m[k]=v`, keys with blanks in `m=([a b]=c)`, `declare +i`,
/// `declare +A` refused, and `BASH_CMDS[n]=path` hashing `n` (bash's
/// tests/assoc and appendop).
#[test]
fn associative_arrays_in_bashs_order() {
    like_bash(
        "declare -A foo=([one]=bar [two]=baz [three]=quux); declare -p foo; foo[0]=zero; \
         foo+=([four]=four); echo ${!foo[@]}; echo ${foo[@]}; foo[two]=x; echo ${!foo[@]}; \
         declare -A m; declare -p m; declare m[k]=v; declare -p m; unset m[k]; declare -p m; \
         declare -a x; declare -p x; \
         declare -A w2=([six]=6 [foo bar]=\"qux qix\"); \
         declare -p w2; declare -i n=1+1; declare +i n; n=3+4; echo $n; \
         declare +A w2 2>/dev/null || echo refused; BASH_CMDS[blat]=/sbin/blat; hash -t blat",
        &[],
        "declare -A foo=([two]=\"baz\" [three]=\"quux\" [one]=\"bar\" )\n\
         four 0 two three one\nfour zero baz quux bar\nfour 0 two three one\n\
         declare -A m\ndeclare -A m=([k]=\"v\" )\ndeclare -A m=()\ndeclare -a x\n\
         declare -A w2=([six]=\"6\" [\"foo bar\"]=\"qux qix\" )\n3+4\nrefused\n/sbin/blat\n",
        0,
    );
}

/// Bracket expressions as bash's tests/posixpat checks them: collating
/// symbols (`[.a.]`, POSIX names like `[.hyphen.]`, `[.space.]`) also as
/// range ends, equivalence classes, `[:ascii:]` and `[:word:]`, and an
/// unknown class or symbol that matches nothing.
#[test]
fn collating_symbols_and_classes_in_brackets() {
    like_bash(
        "for t in 'a [[.a.]]' '- [[.hyphen.]-9]' 'p [[.a.]-[.z.]]' '\\  [[.space.]]' \
         '4 [[.-.]-9]' 'c [[.yyz.][.a.]-z]' 'p [[.a.]-[.zz.]p]' 'a [[:al:]' 'a [[=a=]]' \
         'é [[:ascii:]]' '_ [[:word:]]' 'c [[.yyz.]-[.z.]]' 'b [[:nope:]b]'; do \
         set -- $t; case \"$1\" in $2) echo \"$2 yes\";; *) echo \"$2 no\";; esac; done",
        &[],
        "[[.a.]] yes\n[[.hyphen.]-9] yes\n[[.a.]-[.z.]] yes\n[[.space.]] no\n[[.-.]-9] yes\n\
         [[.yyz.][.a.]-z] yes\n[[.a.]-[.zz.]p] yes\n[[:al:] no\n[[=a=]] yes\n[[:ascii:]] no\n\
         [[:word:]] yes\n[[.yyz.]-[.z.]] no\n[[:nope:]b] yes\n",
        0,
    );
}

/// `declare -c` capitalizes; `trap -p` lists DEBUG, ERR and RETURN after
/// the signals; `declare -ft f` lets f see the DEBUG trap without
/// printing it; lines after an alias whose text ends a command
/// substitution are still counted (bash's casemod, trap and comsub).
#[test]
fn capitalize_trap_order_traced_functions_and_alias_lines() {
    like_bash(
        "declare -c q; q='hELLO wORLD'; echo $q; declare -p q; \
         trap 'echo d' DEBUG; trap 'echo e' ERR; trap : INT; trap -p; trap - DEBUG ERR INT; \
         f() { :; }; declare -ft f; trap 'echo \"[$FUNCNAME]\"' DEBUG; f; trap - DEBUG",
        &[],
        "Hello world\ndeclare -c q=\"Hello world\"\nd\nd\nd\ntrap -- ':' SIGINT\n\
         trap -- 'echo d' DEBUG\ntrap -- 'echo e' ERR\nd\n[]\n[f]\n[f]\n[]\n",
        0,
    );
    like_bash(
        "shopt -s expand_aliases\nalias foo='echo $(echo x)'\nfoo\necho $LINENO\n",
        &[],
        "x\n4\n",
        0,
    );
}

/// `${x@K}` and `${x@k}`: a string quoted as `@Q` does; an array's keys
/// and values, as `declare -p` writes them in one word (`@K`) or each a
/// word (`@k`); nothing for an unset name (Oils' var-op-bash).
#[test]
fn key_value_transformations() {
    like_bash(
        "declare -A A=([a]=1 [b]='x y'); a=(p 'q r'); x=v; e=; \
         printf '<%s>' ${x@K} \"${x@k}\" ${e@K} ${u@K}; echo; printf '<%s>' \"${A[@]@K}\"; echo; \
         printf '<%s>' \"${A[@]@k}\"; echo; printf '<%s>' \"${a[@]@K}\" \"${a[*]@K}\"; echo; \
         printf '<%s>' \"${a[@]@k}\" \"${a@K}\"; echo",
        &[],
        "<'v'><'v'><''>\n<b \"x y\" a \"1\" >\n<b><x y><a><1>\n<0 \"p\" 1 \"q r\"><0 \"p\" 1 \"q r\">\n\
         <0><p><1><q r><'p'>\n",
        0,
    );
}

/// Bugs found reviewing issue 52's changes: `local -ca a=(…)` made its
/// case attribute on the global `a` instead of the local; a function
/// unset and defined again kept its `declare -ft` trace attribute; `unset
/// f` (without `-f`) left an exported function in the environment.
#[test]
fn attributes_go_with_what_they_belong_to() {
    like_bash(
        "f() { local -ca a=(hELLO wORLD); declare -p a; }; f; declare -p a 2>/dev/null || echo none; \
         g() { :; }; declare -ft g; unset -f g; g() { :; }; trap 'echo d' DEBUG; g; trap - DEBUG; \
         h() { :; }; export -f h; unset h; env | grep -c BASH_FUNC_h",
        &[],
        "declare -ac a=([0]=\"Hello\" [1]=\"World\")\nnone\nd\nd\n0\n",
        1,
    );
}

/// What the shared option reader and the table variables give, beside
/// bash: `hash -p` glued to its path or missing it, `export` refusing an
/// unknown option with its usage, `BASH_ALIASES[n]=text` defining an
/// alias.
#[test]
fn builtin_options_and_table_variables() {
    like_bash(
        "hash -p/bin/ls ls; hash -t ls; hash -p 2>/dev/null; echo $?; export -q x 2>/dev/null; echo $?; \
         BASH_ALIASES[hi]='echo hi'; alias hi",
        &[],
        "/bin/ls\n2\n2\nalias hi='echo hi'\n",
        0,
    );
    let o = rush().args(["-c", "export -q x", "NAME"]).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "NAME: line 1: export: -q: invalid option\n\
         export: usage: export [-fn] [name[=value] ...] or export -p\n"
    );
}

/// `set -x` as bash writes it: PS4's first character once more for each
/// eval, source, trap action and command substitution; no prefix with
/// PS4 unset; one line for each assignment (`+=` and subscripts as
/// written, an empty value as nothing); `for`, `select` and `case` heads
/// with their words as written; `(( ))` and each part of `for ((…))`
/// (an empty part is `1`); each `[[ ]]` term with its operands expanded;
/// all of it to `BASH_XTRACEFD` when set. And `trap -p SIG…` lists only
/// those signals, in the order named.
#[test]
fn xtrace_lines_and_levels() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x.sh"), "echo sourced\n").unwrap();
    like_bash_in(
        dir.path(),
        &[],
        "{ set -x; eval 'eval \"echo e\"'; . ./x.sh; x=$(y=$(echo n)); \
         trap 'echo t' USR1; kill -USR1 $BASHPID; a=1 b='x y' : ; i=1; c[$i]+=v; d=(1 $i); e=''; \
         for ((; i < 3 ; i++ )); do :; done; for w in a \"b c\" $i; do :; done; \
         case \"$i\" in 3) ;; esac; (( i + 1 )); \
         [[ $i == \"a b\" || ! -z '' && $i ]]; [[ ! ( $i = 3 ) ]]; \
         PS4='é> '; eval : ; unset PS4; echo quiet; PS4='+ '; \
         exec 4>trace; BASH_XTRACEFD=4; echo fd; unset BASH_XTRACEFD; set +x; cat trace; \
         trap 'echo q' QUIT; trap -p USR1 HUP QUIT; } 2>&1 | sed 's/[0-9][0-9][0-9]*/N/'",
        "+ eval 'eval \"echo e\"'\n++ eval 'echo e'\n+++ echo e\ne\n+ . ./x.sh\n++ echo sourced\nsourced\n+++ echo n\n++ y=n\n+ x=\n+ trap 'echo t' USR1\n+ kill -USR1 N\n++ echo t\nt\n+ a=1\n+ b='x y'\n+ :\n+ i=1\n+ c[$i]+=v\n+ d=(1 $i)\n+ e=\n+ (( 1 ))\n+ (( i < 3  ))\n+ :\n+ (( i++  ))\n+ (( i < 3  ))\n+ :\n+ (( i++  ))\n+ (( i < 3  ))\n+ for w in a \"b c\" $i\n+ :\n+ for w in a \"b c\" $i\n+ :\n+ for w in a \"b c\" $i\n+ :\n+ case \"$i\" in\n+ ((  i + 1  ))\n+ [[ 3 == \\a\\ \\b ]]\n+ [[ ! -z '' ]]\n+ [[ 3 = 3 ]]\n+ PS4='é> '\né> eval :\néé> :\né> unset PS4\necho quiet\nquiet\nPS4='+ '\n+ exec\n+ BASH_XTRACEFD=4\nfd\n+ set +x\n+ echo fd\n+ unset BASH_XTRACEFD\ntrap -- 'echo t' SIGUSR1\ntrap -- 'echo q' SIGQUIT\n",
        0,
    );
}

/// `for ((…))` printed back as bash prints it (an empty part is `1`,
/// the blanks after a part kept), and its two-line syntax errors.
#[test]
fn arith_for_prints_and_refuses_as_bash_does() {
    like_bash(
        "f() { for (( ; i < 3; i++ )); do :; done; for ((;;)); do break; done; }; declare -f f; \
         for (( i=0; \"i < 3\" ; i++ )); do echo $i; done",
        &[],
        "f () \n{ \n    for ((1; i < 3; i++ ))\n    do\n        :;\n    done;\n    for ((1; 1; 1))\n    do\n        break;\n    done\n}\n0\n1\n2\n",
        0,
    );
    for bad in [
        "for (( i=0; \"i < 3\" ))\ndo :; done",
        "for (( i=0; i < 3; i++; 7 ))\ndo :; done",
    ] {
        let o = rush().args(["-c", bad, "NAME"]).output().unwrap();
        let b = bash().args(["-c", bad, "NAME"]).output();
        if let Ok(b) = b {
            assert_eq!(
                String::from_utf8_lossy(&o.stderr),
                String::from_utf8_lossy(&b.stderr)
            );
            assert_eq!(o.status.code(), b.status.code());
        }
    }
}

/// A SIGCHLD trap runs once for each child that ends, and a child's end
/// does not end `wait` (with or without job control).
#[test]
fn sigchld_trap_runs_per_child_and_wait_goes_on() {
    like_bash(
        "trap 'echo caught' CHLD; sleep 0.3 & sleep 0.2 & sleep 0.1 & wait; echo w=$?; \
         sleep 0.1 & sleep 0.3 & wait $!; echo w=$?; set -m; sleep 0.1 & sleep 0.2 & wait; echo w=$?",
        &[],
        "caught\ncaught\ncaught\nw=0\ncaught\ncaught\nw=0\ncaught\ncaught\nw=0\n",
        0,
    );
}

/// Where a list is joined rather than split (assignments, `${x=word}`),
/// `$*` is joined with IFS's first character; in the word of an unquoted
/// `${x-word}` an unquoted `$@` is joined with spaces and then split by
/// IFS (bash's "inconsistent" case); in double quotes `$'…'` where a
/// name goes is its text (extquote).
#[test]
fn lists_joined_in_assignments_and_operator_words() {
    like_bash(
        "set -- 1 2; IFS=; c=$*; echo \"$c\"; unset d; : ${d=$*}; echo \"$d\"; a=$@; echo \"$a\"; \
         set -- ' abc' 'def ghi' 'jkl '; IFS=:; printf '<%s>' ${v-$@}; echo; printf '<%s>' ${v-x$@y}; echo; \
         printf '<%s>' $@; echo; IFS=; printf '<%s>' ${v-$@}; echo; \
         x=notOK x1=not; echo \"${x#${$'x1'%$'t'}}\"",
        &[],
        "12\n12\n1 2\n< abc def ghi jkl >\n<x abc def ghi jkl y>\n< abc><def ghi><jkl >\n< abc><def ghi><jkl >\ntOK\n",
        0,
    );
}

/// An expansion error (a bad substitution, an arithmetic error, an
/// invalid indirection, assigning in a way that cannot be) abandons the
/// command line and the script goes on with the next (bash's DISCARD); in
/// eval and source the text goes on with its next command; `set -u`,
/// `${x?}`, `set -e` and POSIX mode (also when invoked as `sh`) end the
/// shell.
#[test]
fn expansion_errors_abandon_the_line() {
    like_bash(
        "echo \"${x y}\"; echo same\necho next $?\necho $((1/0)); echo same\necho next\n\
         eval 'echo ${!q y}; echo in'$'\\n''echo eval-next'; echo after-eval $?\n\
         f() { echo ${1=x}; echo in-f; }; f; echo same\necho next-f\n\
         (echo \"${x y}\"; echo in-sub); echo out $?",
        &[],
        "next 1\nnext\neval-next\nafter-eval 0\nnext-f\nout 1\n",
        0,
    );
    // 127 at the top of -c (bash's FORCE_EOF), 1 in a subshell.
    like_bash("set -u; echo $zz; echo same\necho next", &[], "", 127);
    like_bash("(echo ${zz?gone}); echo sub $?", &[], "sub 1\n", 0);
    like_bash("set -e; echo ${x y}\necho next", &[], "", 1);
    like_bash("set -o posix; echo $((1/0))\necho next", &[], "", 127);
    let dir = tempfile::tempdir().unwrap();
    let sh = dir.path().join("sh");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_rush"), &sh).unwrap();
    let o = std::process::Command::new(&sh)
        .args([
            "-c",
            "echo $SHELLOPTS | grep -c posix; echo $((1/0))\necho next",
        ])
        .output()
        .unwrap();
    assert_eq!(
        (String::from_utf8_lossy(&o.stdout).as_ref(), o.status.code()),
        ("1\n", Some(127))
    );
}

/// Redirections as bash does them: a background command inside a loop
/// whose input is redirected reads that input, not /dev/null; a special
/// builtin's redirections come before its prefix assignments, and those
/// before `declare`/`local`/`typeset` last only for the command;
/// `command exec` keeps its redirections; messages name the word as
/// written; `|&` prints as `2>&1 |`; POSIX mode does not glob a
/// redirection's word; `help`, `complete` and `jobs` do not report a
/// closed output.
#[test]
fn redirections_as_bash_does_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.1"), "x\n").unwrap();
    like_bash_in(
        dir.path(),
        &[],
        "for x in 1 2; do { read line; echo $line; } & wait; done <<EOF\nab\ncd\nEOF\n\
         a=1; a=9 eval echo foo >&$a; b=1; b=4 c=7 declare -i ss; echo \"$b ${c-unset}\"; \
         exec 9>&2; command exec 2>err; echo kept >&2; exec 2>&9 9>&-; cat err; \
         x=; (echo >&$x) 2>&1 | sed 's/^.*: line [0-9]*: //'; \
         f() { echo a |& cat; }; declare -f f; \
         (set -o posix; cat < in.*) 2>&1 | sed 's/^.*: line [0-9]*: //'; \
         help >&- ; echo $?; complete -W x g; complete >&-; echo $?; \
         g2() { { read l; echo \"[$l]\"; } & wait; } < in.1; g2",
        "ab\ncd\nfoo\n1 unset\nkept\n$x: ambiguous redirect\nf () \n{ \n    echo a 2>&1 | cat\n}\nin.*: No such file or directory\n0\n0\n[x]\n",
        0,
    );
}

/// The directory stack's errors (bash's messages, each with its usage
/// line), its quiet `pushd -n +0`, `DIRSTACK[n]=dir`, and `~N`, `~+N`,
/// `~-N` naming its entries.
#[test]
fn directory_stack_errors_and_tildes() {
    like_bash(
        "exec 2>&1; cd /; pushd -m; popd -m; dirs -m; dirs 7; popd; pushd /usr >/dev/null; pushd /tmp >/dev/null; \
         dirs +9; dirs -9; pushd +9; popd -9; pushd -n +0; dirs; echo ~0 ~1 ~2 ~+1 ~-0 ~-2 ~9; \
         DIRSTACK[1]=/bin; dirs; popd -n +1 >/dev/null; dirs; dirs -c; dirs",
        &[],
        "sh: line 1: pushd: -m: invalid number\npushd: usage: pushd [-n] [+N | -N | dir]\n\
         sh: line 1: popd: -m: invalid number\npopd: usage: popd [-n] [+N | -N]\n\
         sh: line 1: dirs: -m: invalid number\ndirs: usage: dirs [-clpv] [+N] [-N]\n\
         sh: line 1: dirs: 7: invalid option\ndirs: usage: dirs [-clpv] [+N] [-N]\n\
         sh: line 1: popd: directory stack empty\n\
         sh: line 1: dirs: 9: directory stack index out of range\n\
         sh: line 1: dirs: 9: directory stack index out of range\n\
         sh: line 1: pushd: +9: directory stack index out of range\n\
         sh: line 1: popd: -9: directory stack index out of range\n\
         /tmp /usr /\n/tmp /usr / /usr / /tmp ~9\n/tmp /bin /\n/tmp /\n/tmp\n",
        0,
    );
}

/// `${#-}`, `${#?}`, `${##}` and `${#@}` are lengths only when `}`
/// follows; `${#?word}` is `$#` with an operator; `${#%}` and its
/// neighbours are bad substitutions.
#[test]
fn length_or_operator_after_hash() {
    like_bash(
        "set -- a b; echo ${#?:-xyz} ${##} ${#@} ${#*} ${#-x} ${##a}; (echo ${#/}) 2>/dev/null || echo bad",
        &[],
        "2 1 2 2 2 2\nbad\n",
        0,
    );
}

/// `time` and `!` in any order and number, and alone (a null command
/// timed or inverted), as bash's grammar has them.
#[test]
fn time_and_bang_prefixes() {
    like_bash(
        "TIMEFORMAT=t; !\necho $?\n! !\necho $?\n! ! ! true; echo $?; time ! true 2>/dev/null; echo $?; \
         ! time true; echo $?; time time -p -- echo a; f() { time; }; declare -f f",
        &[],
        "1\n0\n1\n1\n1\na\nf () \n{ \n    time \n}\n",
        0,
    );
}

/// `shopt -s -o` and `shopt -u -o` alone list the set options that are
/// on or off (they change nothing); a bad option gets the usage line; a
/// script without `#!` keeps the caller's globskipdots, as bash's child
/// does.
#[test]
fn shopt_listing_and_script_children() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("noshebang");
    write_executable(&script, "shopt globskipdots extglob\n");
    like_bash_in(
        dir.path(),
        &[],
        "shopt -s -p -o; echo --; shopt -u -o | grep -c off; shopt -z 2>&1; \
         shopt -u globskipdots; shopt -s extglob; ./noshebang; true",
        "set -o braceexpand\nset -o hashall\nset -o interactive-comments\n--\n24\n\
         sh: line 1: shopt: -z: invalid option\nshopt: usage: shopt [-pqsu] [-o] [optname ...]\n\
         globskipdots   \toff\nextglob        \toff\n",
        0,
    );
}

/// Extended globs as bash matches them: a bracket expression that never
/// closes keeps a group open (so `!([*)*` is no group), a dot file is
/// matched by a leading group's alternative that starts with a dot, and
/// GLOBIGNORE drops names (its patterns split at colons outside brackets
/// and groups) and finds dot files.
#[test]
fn extglob_brackets_dots_and_globignore() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["abcx", "abcz", "bbc", ".x", ".y", ";", "++"] {
        std::fs::write(dir.path().join(f), "").unwrap();
    }
    like_bash_in(
        dir.path(),
        &[],
        "shopt -s extglob\necho !([*)* +(a|b[)*; case '*(a|b[)' in *(a|b[)) echo yes;; *) echo no;; esac; \
         echo @(.x|a*) ?(.y) !(.*); GLOBIGNORE='+([^[:alnum:]]):a*'; echo *; GLOBIGNORE=; echo *; shopt dotglob; unset GLOBIGNORE; echo *",
        "!([*)* +(a|b[)*\nyes\n.x abcx abcz .y ++ ; abcx abcz bbc\n.x .y bbc\n++ .x .y ; abcx abcz bbc\n\
         dotglob        \ton\n++ ; abcx abcz bbc\n",
        0,
    );
}

/// Without globskipdots a leading dot matches `.` and `..` (never
/// `*`, even with dotglob); `*(bar).foo` matches `.foo`.
#[test]
fn dots_without_globskipdots() {
    let dir = tempfile::tempdir().unwrap();
    for f in [".foo", "bar", ".a"] {
        std::fs::write(dir.path().join(f), "").unwrap();
    }
    like_bash_in(
        dir.path(),
        &[],
        "shopt -s extglob; shopt -u globskipdots\necho .* @(.*) *(bar).foo ?(bar).foo; shopt -s dotglob; echo * .?",
        ". .. .a .foo . .. .a .foo .foo .foo\n.a .foo bar .. .a\n",
        0,
    );
}

/// mapfile as bash's: `-C cmd -c n` runs cmd with the index and the line
/// every n lines, `-O` keeps the array's other elements, `-d ''` drops
/// the NUL, clustered options, and bash's messages for bad numbers.
#[test]
fn mapfile_callbacks_origin_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "a\nb\nc\nd\ne\n").unwrap();
    like_bash_in(
        dir.path(),
        &[],
        "mapfile -C 'echo cb' -c 2 A < f.txt; D=(x x x x x x x); mapfile -tO 2 -n 2 D < f.txt; echo \"${D[*]}\"; \
         printf 'p\\0q\\0' | { mapfile -d '' B; echo \"${#B[0]} ${B[1]}\"; }; \
         mapfile -c 0 C < f.txt 2>&1 | sed 's/^.*line 1: //'; mapfile -q 2>&1 | sed 's/^.*line 1: //'",
        "cb 1 b\n\ncb 3 d\n\nx x a b x x x\n1 q\nmapfile: 0: invalid callback quantum\n\
         mapfile: -q: invalid option\nmapfile: usage: mapfile [-d delim] [-n count] [-O origin] [-s count] [-t] [-u fd] [-C callback] [-c quantum] [array]\n",
        0,
    );
}

/// In `=~`, a bracket expression is passed as written, quoted characters
/// too (`["."]` is `[.]`); `printf %q` writes control characters as
/// `$'…'`; an arithmetic error names its command (`((`, `[[`, `let`),
/// the expression with the blanks before it dropped, and the text from
/// the last token, and fails only that command.
#[test]
fn regex_brackets_printf_q_and_arith_errors() {
    like_bash(
        "exec 2>&1; [[ '\\' =~ [\".\"] ]] || echo no1; [[ '\\' =~ [\\.] ]] || echo no2; [[ ']' =~ [']'] ]] && echo yes3; \
         [[ dog =~ ['[=d=]'].. ]] && echo yes4; printf '%q %q\\n' $'a\\tb' $'x\\001'; \
         ((4+)); echo s=$?; [[ 4+ -eq 2* ]]; echo s=$?; let '4 +'; echo s=$?; ((1/0)); echo s=$?\n\
         echo $(( 4 + ))\necho after",
        &[],
        "no1\nno2\nyes3\nyes4\n$'a\\tb' $'x\\001'\n\
         sh: line 1: ((: 4+: syntax error: operand expected (error token is \"+\")\ns=1\n\
         sh: line 1: [[: 4+: syntax error: operand expected (error token is \"+\")\ns=1\n\
         sh: line 1: let: 4 +: syntax error: operand expected (error token is \"+\")\ns=1\n\
         sh: line 1: ((: 1/0: division by 0 (error token is \"0\")\ns=1\n\
         sh: line 2: 4 + : syntax error: operand expected (error token is \"+ \")\nafter\n",
        0,
    );
}

/// An arithmetic error in `${x:off:len}` names the parameter; an operator
/// where an operand goes is "operand expected" with the text from it.
#[test]
fn arith_errors_in_substrings_and_operands() {
    like_bash(
        "exec 2>&1; x=abcdef; echo ${x:1+}\necho ${x:1:2*}\necho ${#:%}\necho $(( 4 + * 3 ))\necho after",
        &[],
        "sh: line 1: x: 1+: syntax error: operand expected (error token is \"+\")\n\
         sh: line 2: x: 2*: syntax error: operand expected (error token is \"*\")\n\
         sh: line 3: #: %: syntax error: operand expected (error token is \"%\")\n\
         sh: line 4: 4 + * 3 : syntax error: operand expected (error token is \"* 3 \")\nafter\n",
        0,
    );
}

/// bash's words for arithmetic faults: a base without digits, a second
/// `#`, an assignment to what is not a variable, a `?` without its
/// expression or `:`, an unclosed `(`, a character that is no operand.
#[test]
fn arith_fault_words() {
    like_bash(
        "exec 2>&1; echo $((2#))\necho $((2#1#1))\necho $((7 = 43 ))\necho $((4 ? : 3))\necho $((1 ? 20 ))\n\
         let '(4 * 6 '\necho after",
        &[],
        "sh: line 1: 2#: invalid integer constant (error token is \"2#\")\n\
         sh: line 2: 2#1#1: invalid number (error token is \"2#1#1\")\n\
         sh: line 3: 7 = 43 : attempted assignment to non-variable (error token is \"= 43 \")\n\
         sh: line 4: 4 ? : 3: expression expected (error token is \": 3\")\n\
         sh: line 5: 1 ? 20 : `:' expected for conditional expression (error token is \"20 \")\n\
         sh: line 6: let: (4 * 6 : missing `)' (error token is \"6 \")\nafter\n",
        0,
    );
}

/// A prefix assignment's `set -x` line shows the value it gives, with
/// `+=` already done (`a=13`), on a line of its own.
#[test]
fn xtrace_of_prefix_appends() {
    like_bash(
        "a=1; exec 2>&1; set -x; a+=3 true",
        &[],
        "+ a=13\n+ true\n",
        0,
    );
}

/// `$[expr]` is bash's old spelling of `$((expr))`, nesting on brackets.
#[test]
fn dollar_bracket_arithmetic() {
    like_bash(
        "echo $[ 13 * 2 ] \"$[1+$[2]]\" $[a[0]=3] $a",
        &[],
        "26 3 3 3\n",
        0,
    );
}

/// `${x:=word}` expands to the value as stored, after `declare -i`
/// evaluates it or `declare -u` changes its case.
#[test]
fn assign_default_keeps_attributes() {
    like_bash(
        "declare -i a; echo ${a:=4+3}; declare -p a; declare -u A=; echo ${A:=foo}; \
         declare -l b; echo ${b[2]:=XY}; declare -p b",
        &[],
        "7\ndeclare -i a=\"7\"\nFOO\nxy\ndeclare -al b=([2]=\"xy\")\n",
        0,
    );
}

/// `${x@A}` recreates x: `declare -FLAGS` with its attributes, a whole
/// array as `declare -p` writes it, `set --` for the positional
/// parameters, the flags alone for a declared but unset x.
#[test]
fn at_a_transform_as_bash() {
    like_bash(
        "a=(x y); echo ${a[@]@A}; echo ${a[1]@A}; declare -A m=([k]=v); echo ${m[@]@A}; \
         echo ${m@A}; b=(); echo \"${b[@]@A}\"; declare -a e; echo \"${e[@]@A}\"; \
         declare -i n=3; echo ${n[@]@A}; set -- a 'b c'; echo \"${@@A}\"; \
         declare -u U=q; echo ${U@A} ${U@a} ${zz@A}x; declare -ir ri=1; declare -n nr=ri; \
         echo ${nr@A}",
        &[],
        "declare -a a=([0]=\"x\" [1]=\"y\")\ndeclare -a a='y'\ndeclare -A m=([k]=\"v\" )\n\
         declare -A m\ndeclare -a b=()\ndeclare -a e\ndeclare -i n='3'\nset -- 'a' 'b c'\n\
         declare -u U='Q' u x\ndeclare -ir ri='1'\n",
        0,
    );
}

/// `$'…'` quoting writes bytes that are not part of a printable UTF-8
/// character in octal, and an associative array's key with a control
/// character is quoted that way too.
#[test]
fn ansi_c_quoting_of_invalid_utf8() {
    like_bash(
        "declare -A m=([$'x\\001y']=$'a\\242b'); declare -p m; x=$'\\242é\\u0085'; echo ${x@Q}",
        &[],
        "declare -A m=([$'x\\001y']=$'a\\242b' )\n$'\\242é\\302\\205'\n",
        0,
    );
}

/// A bad index in `a=(…)` leaves the elements assigned before it, and the
/// variable an array (bash).
#[test]
fn bad_index_in_array_assignment_keeps_earlier_elements() {
    let dir = tempfile::tempdir().unwrap();
    like_bash_in(
        dir.path(),
        &[],
        "printf '%s\\n' 'a=(9 9 9); a=(1 2 [1+]=3)' 'declare -p a; b=x; b=([1+]=3)' 'declare -p b' >s; \
         \"$BASH\" s 2>/dev/null",
        "declare -a a=([0]=\"1\" [1]=\"2\")\ndeclare -a b=()\n",
        0,
    );
}

/// `$BASH` is the full file name of the running shell, so a script can
/// start another of the same shell.
#[test]
fn bash_names_the_running_shell() {
    like_bash(
        "test -x \"$BASH\" && case $BASH in /*) \"$BASH\" -c 'echo ok';; esac",
        &[],
        "ok\n",
        0,
    );
}

/// A here-document that the end of the input ends is used, with a
/// newline after its last line, and bash's warning; inside `$(…)`, a line
/// that starts with the delimiter and has a `)` after it ends the
/// document (`x=$(cat <<EOF … EOF)`), with the same warning.
#[test]
fn heredoc_ended_by_eof_or_paren() {
    like_bash(
        "exec 2>&1\ne=$(cat <<EOF\ncontents\nEOF)\necho \"[$e]\"\nx=$(cat <<\\)\nhi\n))\necho \"[$x]\"\ncat <<EOF\nlast",
        &[],
        "sh: line 4: warning: here-document at line 2 delimited by end-of-file (wanted `EOF')\n\
         [contents]\n\
         sh: line 8: warning: here-document at line 6 delimited by end-of-file (wanted `)')\n\
         [hi]\n\
         sh: line 11: warning: here-document at line 10 delimited by end-of-file (wanted `EOF')\n\
         last\n",
        0,
    );
}

/// A here-document's body is parsed when it is expanded, as bash does: an
/// unclosed `$(` in it fails that command (status 1), not the script.
#[test]
fn heredoc_body_parse_error_fails_the_command() {
    like_bash(
        "exec 2>&1; read foo <<EOF\n$(seq 10\nEOF\necho \"[$foo] $?\"",
        &[],
        "sh: command substitution: line 3: unexpected EOF while looking for matching `)'\n[] 1\n",
        0,
    );
}

/// Unquoted `$@` and `${a[@]}` are joined with IFS's first character and
/// then split, so an element that starts or ends with a separator makes
/// an empty field, as in bash; with IFS empty each element stays a field.
#[test]
fn unquoted_list_joined_then_split() {
    like_bash(
        "recho() { printf '<%s>' \"$@\"; echo; }; IFS=\"'\"; arr=(\"'a'\" \"'b'\" c); recho ${arr[@]}; \
         arr=('' b); recho ${arr[@]}; arr=('' ''); recho ${arr[@]}; arr=(\"a'\" b); recho x${arr[@]}y; \
         IFS=' :'; arr=(a: :b); recho ${arr[@]}; set -- \"x'y\" \"'z'\"; IFS=\"'\"; recho $@ $*; \
         IFS=; arr=(a: :b); recho ${arr[@]}",
        &[],
        "<><a><><><b><><c>\n<><b>\n<>\n<xa><><by>\n<a><><b>\n<x><y><><z><x><y><><z>\n<a:><:b>\n",
        0,
    );
}

/// `${!*}` and `${!@}` are indirections through `$*`/`$@`, and
/// `${s[@]:off:len}` of a string is its substring.
#[test]
fn indirect_star_and_string_slice_with_at() {
    like_bash(
        "exec 2>&1; set -- a; a=X; echo ${!*} ${!@}; set --; echo \"[${!*}]\"; f=abcd; x=${f[@]:0:1}; \
         echo $x \"${f[@]:1:2}\"; g=(abcd ef); echo ${g[@]:1:1}; set -- 'a b'; echo ${!@}; echo next",
        &[],
        "X X\n[]\na bc\nef\nsh: line 1: a b: invalid variable name\n",
        1,
    );
}

/// `set -r` makes a restricted shell, as bash's: no `cd`, no `/` in
/// command names or `.` files, no output redirections, no `exec` of a
/// command, no `command -p`, no `hash -p` outside PATH, and no way back.
#[test]
fn restricted_shell_refuses_what_bash_refuses() {
    let dir = tempfile::tempdir().unwrap();
    like_bash_in(
        dir.path(),
        &[],
        "exec 2>&1; printf 'echo sourced\\n' > s; set -r; echo $-; cd /; echo cd $?; /bin/echo x; echo slash $?\n\
         . ./s; echo dot $?\necho hi > f\necho redir $?; echo hi >> f\necho hi &> f\ntest -e f; echo ls $?\n\
         command -p echo x; echo p $?; hash -p /bin/sh sh; echo hash $?; hash -p nosuchcmd a; echo hash2 $?\n\
         exec echo gone; echo exec $?; set +r; echo plus $?; echo $-",
        "hrBc\nsh: line 1: cd: restricted\ncd 1\n\
         sh: line 1: /bin/echo: restricted: cannot specify `/' in command names\nslash 1\n\
         sh: line 2: .: ./s: restricted\ndot 1\nsh: line 3: f: restricted: cannot redirect output\n\
         redir 1\nsh: line 4: f: restricted: cannot redirect output\n\
         sh: line 5: f: restricted: cannot redirect output\nls 1\n\
         sh: line 7: command: -p: restricted\np 1\nsh: line 7: hash: /bin/sh: restricted\nhash 1\n\
         sh: line 7: hash: nosuchcmd: not found\nhash2 1\nsh: line 8: exec: restricted\nexec 1\n\
         sh: line 8: set: +r: invalid option\n\
         set: usage: set [-abefhkmnptuvxBCEHPT] [-o option-name] [--] [-] [arg ...]\nplus 1\nhrBc\n",
        0,
    );
}

/// Started with `-r`, the shell is restricted from the start: PATH and
/// SHELL are read-only, `shopt restricted_shell` is on, and functions in
/// the environment are not imported.
#[test]
fn restricted_from_the_start() {
    like_bash_in(
        std::path::Path::new("/"),
        &["-r"],
        "exec 2>&1; shopt restricted_shell; readonly -p | grep -c ' PATH='; PATH=/x; echo $?",
        "restricted_shell\ton\n1\nsh: line 1: PATH: readonly variable\n",
        1,
    );
}

/// An unknown `set` letter is an error with bash's usage line, status 2;
/// the script goes on.
#[test]
fn set_invalid_option_goes_on() {
    like_bash(
        "exec 2>&1; set -Q\necho after $?",
        &[],
        "sh: line 1: set: -Q: invalid option\n\
         set: usage: set [-abefhkmnptuvxBCEHPT] [-o option-name] [--] [-] [arg ...]\nafter 2\n",
        0,
    );
}

/// `++`/`--` as bash reads them: a step only next to a variable, else two
/// signs (`4++` lacks an operand, `4+++a` is 4 + ++a); the branch after
/// `:` takes no assignment; error tokens run to the end of the text.
#[test]
fn arith_steps_and_error_tokens_as_bash() {
    like_bash(
        "exec 2>&1; a=1; echo $(( 4+++a )) $a $(( 4---a )) $a; echo $(( 4++ ))\necho $(( 7-- ))\n\
         echo $(( 1 ? 20 : x+=2 ))\necho $(( 44 / 0 ))\necho $(( 1/0+3 ))\nA='4 + '; echo $(( (4 + A) + 4 ))\n\
         (( x=9 y=41 ))\niv=3; echo $(( jv += \\$iv ))\nfoo=1; echo $(( 'foo' ))\nP=abcdefg; echo ${P:1 ? 4 : 2} ${P: 5>4 ? 4 : 2:1}",
        &[],
        "6 2 3 1\nsh: line 1: 4++ : syntax error: operand expected (error token is \"+ \")\n\
         sh: line 2: 7-- : syntax error: operand expected (error token is \"- \")\n\
         sh: line 3: 1 ? 20 : x+=2 : attempted assignment to non-variable (error token is \"+=2 \")\n\
         sh: line 4: 44 / 0 : division by 0 (error token is \"0 \")\n\
         sh: line 5: 1/0+3 : division by 0 (error token is \"0+3 \")\n\
         sh: line 6: 4 + : syntax error: operand expected (error token is \"+ \")\n\
         sh: line 7: ((: x=9 y=41 : syntax error in expression (error token is \"y=41 \")\n\
         sh: line 8: jv += $iv : syntax error: operand expected (error token is \"$iv \")\n\
         sh: line 9: 'foo' : syntax error: operand expected (error token is \"'foo' \")\nefg e\n",
        0,
    );
}

/// An element stepped or updated in place (`a[RANDOM%6]++`) has its
/// subscript evaluated once, as in bash.
#[test]
fn arith_subscript_evaluated_once() {
    like_bash(
        "RANDOM=42; (( d[RANDOM%6+1 + RANDOM%6+1]++ )); RANDOM=42; (( e[RANDOM%6+1 + RANDOM%6+1] += 5 )); \
         i=0; (( f[i++] += 2 )); echo ${!d[@]} ${d[@]} ${!e[@]} ${e[@]} ${!f[@]} ${f[@]} $i",
        &[],
        "6 1 6 5 0 2 1\n",
        0,
    );
}

/// A here-document's delimiter is the word as written, quotes removed and
/// nothing expanded; with an unquoted delimiter a backslash-newline joins
/// lines first; `<<-` compares a line before stripping its tabs; the
/// documents of a line are read after the line, not inside its `$(`.
#[test]
fn heredoc_delimiters_as_bash() {
    like_bash(
        "exec 2>&1\ncat <<EO`true`F\nbody\nEO`true`F\ncat << EOF\nhi\nEO\\\nF\ncat <<-'\tEND'\n\tx\n\tEND\n\
         cat <<END\nhello\\\nEND\nEND\necho $(cat << EOF)\nfoo\nEOF\necho after",
        &[],
        "body\nhi\nx\nhelloEND\n\
         sh: line 16: warning: command substitution: 1 unterminated here-document\nfoo\nafter\n",
        0,
    );
}

/// `set -k`: assignments anywhere in a command go to its environment or,
/// with no command left, to the shell.
#[test]
fn keyword_option_takes_assignments_anywhere() {
    like_bash(
        "set -k; E=; a=5 $E c=7 $E d=8; echo $a $c $d; env x=1 | grep -c '^x=1'; sh -c 'echo $y' y=2",
        &[],
        "5 7 8\n1\n2\n",
        0,
    );
}

/// `local` alone lists the function's locals, sorted, as `declare -p`
/// does; a `for` name that is no identifier fails that loop only.
#[test]
fn local_listing_and_bad_for_name() {
    like_bash(
        "exec 2>&1; f() { local z=yy b; local -a avar=(x); local; }; f\nfor 1 in a b; do echo $1; done\necho after $?",
        &[],
        "declare -a avar=([0]=\"x\")\ndeclare -- b\ndeclare -- z=\"yy\"\n\
         sh: line 2: `1': not a valid identifier\nafter 1\n",
        0,
    );
}

/// `read`'s last variable takes the one field left without its
/// delimiter (`::` with IFS=': ' is two empty fields).
#[test]
fn read_last_field_drops_its_delimiter() {
    like_bash(
        "for l in '::' ' : : ' 'a:' 'a::' 'a:b:'; do IFS=': ' read x y <<< \"$l\"; echo \"($x)($y)\"; IFS=: read z <<< \"$l\"; echo \"[$z]\"; done",
        &[],
        "()()\n[::]\n()()\n[ : : ]\n(a)()\n[a]\n(a)()\n[a::]\n(a)(b)\n[a:b:]\n",
        0,
    );
}

/// `$(< file)` is the file's contents, read by the shell; a missing file
/// is an error and status 1.
#[test]
fn comsub_of_a_file() {
    let dir = tempfile::tempdir().unwrap();
    like_bash_in(
        dir.path(),
        &[],
        "seq 2 3 > f; x=$(< f); echo \"[$x]\" $?; y=`< f`; echo \"[$y]\"; n=f; echo \"$(<$n)\"; \
         z=$(< nofile 2>/dev/null); echo \"[$z] $?\"",
        "[2\n3] 0\n[2\n3]\n2\n3\n[] 1\n",
        0,
    );
}

/// Arithmetic's blanks are space, tab and newline (a carriage return is
/// an error); a number with a base already (leading 0) cannot take `#`;
/// a quoted `-` in a bracket is no range; the replacement of `${x/p/r}`
/// and the word of `${x-w}` in an assignment expand tildes as bash does.
#[test]
fn arith_blanks_brackets_and_tildes() {
    like_bash(
        "exec 2>&1; echo $(( $1 + 1 )); (echo $(( $2 + 1 ))); echo $(( 02#0110 ))\n\
         case - in [C\\-D]) echo dash;; esac; case b in [a\\-c]) echo b;; esac\n\
         HOME=/home/bar; x=~; echo ${x//~/~root}; y=~:${undef-~:~}; echo $y",
        &["\t42\t", "\r42\r"],
        "43\nsh: line 1: \r42\r + 1 : syntax error: operand expected (error token is \"\r42\r + 1 \")\n\
         sh: line 1: 02#0110: invalid number (error token is \"02#0110\")\n\
         dash\n/root\n/home/bar:/home/bar:/home/bar\n",
        0,
    );
}

/// `"${*:-w}"` is null when `$*` joins to nothing (IFS empty); `trap`
/// prints actions in single quotes even across lines; `trap -1` is an
/// invalid option; a compound command's own status stays out of
/// PIPESTATUS.
#[test]
fn star_null_trap_listing_and_pipestatus() {
    like_bash(
        "exec 2>&1; set -- '' ''; IFS=; echo \"[${*:-minus}] [${*:+plus}] [${@:-m}]\"; unset IFS\n\
         trap 'echo 1\necho 2' INT; trap; trap -1 EXIT; echo $?\n\
         case a in a) ;; esac; echo \"[${PIPESTATUS[@]}]\"; false; case a in a) ;; esac; echo \"[${PIPESTATUS[@]}]\"; \
         false; for i in; do :; done; echo \"[${PIPESTATUS[@]}]\"; false; (exit 3); echo \"[${PIPESTATUS[@]}]\"",
        &[],
        "[minus] [] [ ]\ntrap -- 'echo 1\necho 2' SIGINT\nsh: line 3: trap: -1: invalid option\n\
         trap: usage: trap [-lp] [[arg] signal_spec ...]\n2\n[0]\n[1]\n[1]\n[3]\n",
        0,
    );
}

/// `V=1 exec prog` hands V to prog; `cd nosuch/..` fails as bash's does
/// (what `..` would leave must be a directory), and `cd link/..` stays
/// logical.
#[test]
fn exec_prefix_and_cd_dotdot() {
    let dir = tempfile::tempdir().unwrap();
    like_bash_in(
        dir.path(),
        &[],
        "exec 2>&1; mkdir -p d; ln -s d l; cd nonexistent_ZZ/..; echo status=$?; cd l/..; [ \"$PWD\" = \"$OLDPWD\" ] && echo same\n\
         pre1=pre1 readonly x=x; pre2=pre2 exec sh -c 'echo pre1=$pre1 x=$x pre2=$pre2'",
        "sh: line 1: cd: nonexistent_ZZ/..: No such file or directory\nstatus=1\nsame\npre1= x= pre2=pre2\n",
        0,
    );
}

/// alias, unalias and unset refuse unknown options with bash's usage
/// lines (status 2), and `unset -fv` is refused.
#[test]
fn alias_unalias_unset_options() {
    like_bash(
        "exec 2>&1; alias -x foo=barz; echo $?; unalias -x fooaha; echo $?; unset -x a; echo $?; unset -fv q; echo $?",
        &[],
        "sh: line 1: alias: -x: invalid option\nalias: usage: alias [-p] [name[=value] ... ]\n2\n\
         sh: line 1: unalias: -x: invalid option\nunalias: usage: unalias [-a] name [name ...]\n2\n\
         sh: line 1: unset: -x: invalid option\nunset: usage: unset [-f] [-v] [-n] [name ...]\n2\n\
         sh: line 1: unset: cannot simultaneously unset a function and a variable\n1\n",
        0,
    );
}

/// A prefix assignment that `export`, `readonly` or `declare -r`/`-x`
/// names stays, exported (bash promotes it); one that `declare` alone
/// names goes. `set -o ignoreeof` keeps IGNOREEOF at 10.
#[test]
fn prefix_assignment_promoted_by_export() {
    like_bash(
        "exec 2>&1; a=1 declare b=2; declare -p a b; c=3 declare -r c; declare -p c; g=7 export g; \
         declare -p g; h=8 readonly h=9; declare -p h; f=6 declare f; declare -p f\n\
         set -o ignoreeof; echo $IGNOREEOF; set +o ignoreeof; echo ${IGNOREEOF-unset}",
        &[],
        "sh: line 1: declare: a: not found\ndeclare -- b=\"2\"\ndeclare -rx c=\"3\"\ndeclare -x g=\"7\"\n\
         declare -rx h=\"9\"\nsh: line 1: declare: f: not found\n10\nunset\n",
        0,
    );
}

/// `exec -i` is an invalid option (usage, status 2) and the shell goes
/// on; `shift label` fails (status 1) and `shift 1 2` abandons its line;
/// a negative count is out of range.
#[test]
fn exec_and_shift_errors_go_on() {
    like_bash(
        "exec 2>&1; exec -i; echo $?\nset -- a b\nshift label; echo st $?\nshift -2; echo st $?\nshift 1 2; echo same",
        &[],
        "sh: line 1: exec: -i: invalid option\n\
         exec: usage: exec [-cl] [-a name] [command [argument ...]] [redirection ...]\n2\n\
         sh: line 3: shift: label: numeric argument required\nst 1\n\
         sh: line 4: shift: -2: shift count out of range\nst 1\n\
         sh: line 5: shift: too many arguments\n",
        1,
    );
}

/// `readonly -f` and `declare -fr` make a function read-only: it cannot
/// be redefined, unset or made writable again, and `declare -F` shows it.
#[test]
fn readonly_functions() {
    like_bash(
        "exec 2>&1; func() { echo func; }; readonly -f func; declare -Fr; func() { echo bar; }; echo $?; func; \
         unset -f func; echo $?; declare -f +r func; echo $?; declare -F; readonly -f nosuch; echo $?",
        &[],
        "declare -fr func\nsh: line 1: func: readonly function\n1\nfunc\n\
         sh: line 1: unset: func: cannot unset: readonly function\n1\n\
         sh: line 1: declare: func: readonly function\n1\ndeclare -fr func\n\
         sh: line 1: readonly: nosuch: not a function\n1\n",
        0,
    );
}

/// More of bash's usage errors: `.`/`source` with an option or no file,
/// `readonly -x`, `eval -i`, `command -i`, `trap -p -s`, `shopt -s -u`,
/// `read -t word`; `break 0`/`continue 0` leave the loops, not the shell.
#[test]
fn usage_errors_of_more_builtins() {
    like_bash(
        "exec 2>&1; . -i /dev/tty; echo $?; source; echo $?; readonly -x foo; echo $?; eval -i 'echo x'; echo $?\n\
         command -i 'echo x'; echo $?; trap -p -s NOSIG; echo $?; shopt -s -u checkhash; echo $?; read -t var </dev/null; echo $?\n\
         for z in 1 2; do continue 0; echo in; done; for z in 1 2; do break 0; done; echo after; \
         a=1; readonly -n a; echo $?; declare -p a",
        &[],
        "sh: line 1: .: -i: invalid option\n.: usage: . filename [arguments]\n2\n\
         sh: line 1: source: filename argument required\nsource: usage: source filename [arguments]\n2\n\
         sh: line 1: readonly: -x: invalid option\n\
         readonly: usage: readonly [-aAf] [name[=value] ...] or readonly -p\n2\n\
         sh: line 1: eval: -i: invalid option\neval: usage: eval [arg ...]\n2\n\
         sh: line 2: command: -i: invalid option\ncommand: usage: command [-pVv] command [arg ...]\n2\n\
         sh: line 2: trap: -s: invalid option\ntrap: usage: trap [-lp] [[arg] signal_spec ...]\n2\n\
         sh: line 2: shopt: cannot set and unset shell options simultaneously\n1\n\
         sh: line 2: read: var: invalid timeout specification\n1\n\
         sh: line 3: continue: 0: loop count out of range\nsh: line 3: break: 0: loop count out of range\nafter\n0\ndeclare -- a=\"1\"\n",
        0,
    );
}

/// declare's messages name the builtin as called: `local`, `typeset`.
#[test]
fn declare_messages_name_the_builtin() {
    like_bash(
        "exec 2>&1; readonly var=outside; f() { local var=inside; echo \"in $var\"; }; f; typeset -r t=1; \
         typeset t=2; typeset -p nosuch",
        &[],
        "environment: line 1: local: var: readonly variable\nin outside\nsh: line 1: typeset: t: readonly variable\n\
         sh: line 1: typeset: nosuch: not found\n",
        1,
    );
}

/// `z=y local z` in a function: the new local starts with the prefix
/// value, and the caller's z is left as it was (bash).
#[test]
fn local_takes_its_prefix_value() {
    like_bash(
        "f() { z=y typeset z; echo \"|$z|\"; }; f; z=42 f; echo \"g=$z\"; z=5; f; echo \"z=$z\"; \
         h() { q=7 local q=8; echo \"<$q>\"; }; q=0; h; echo \"$q\"",
        &[],
        "|y|\n|y|\ng=\n|y|\nz=5\n<8>\n0\n",
        0,
    );
}

/// After `--`, `.` and `source` take a file whose name starts with `-`.
#[test]
fn source_dashdash_file() {
    let dir = tempfile::tempdir().unwrap();
    like_bash_in(
        dir.path(),
        &[],
        "printf 'echo dashfile\\n' > ./-f1; source -- -f1; . -- -f1; echo $?",
        "dashfile\ndashfile\n0\n",
        0,
    );
}

#[test]
fn globstar_runs_links_and_directory_forms() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    for d in ["a/a/a", "a/b", "b"] {
        std::fs::create_dir_all(p.join(d)).unwrap();
    }
    std::fs::write(p.join("a/ab"), "").unwrap();
    std::fs::write(p.join("b/bb"), "").unwrap();
    std::os::unix::fs::symlink("a", p.join("c")).unwrap();
    for (script, out) in [
        // A run of `**` is one `**`.
        ("echo **/**", "a a/a a/a/a a/ab a/b b b/bb c\n"),
        ("echo **/**/**/ab", "a/ab\n"),
        // `dir/**` lists `dir/`; with a pattern in the directory, `dir`.
        ("echo b/**", "b/ b/bb\n"),
        ("echo b/**/**", "b b/bb\n"),
        (
            "echo */**",
            "a a/a a/a/a a/ab a/b b b/bb c c/a c/a/a c/ab c/b\n",
        ),
        // A link to a directory is listed by `**/` but never entered.
        ("echo **/", "a/ a/a/ a/a/a/ a/b/ b/ c/\n"),
        ("echo **/*b", "a/ab a/b b b/bb\n"),
    ] {
        like_bash_in(p, &["-O", "globstar"], script, out, 0);
    }
}

#[test]
fn compound_subscripts_drop_ctlesc_as_bash_does() {
    like_bash(
        "a=([$'1\\0012']=5); declare -p a",
        &[],
        "declare -a a=([12]=\"5\")\n",
        0,
    );
    like_bash(
        "i=$'3\\0014'; b=([$i]=5); declare -p b",
        &[],
        "declare -a b=([34]=\"5\")\n",
        0,
    );
}

#[test]
fn unquoted_star_under_ifs_made_null_in_the_word() {
    let script = "set -f -- a 'b c' d; unset -v IFS
printf '<%s> ' ${*}${IFS=}${*}${IFS:=-}\"${*}\"; echo
unset -v IFS; printf '<%s> ' ${IFS=}${*}; echo";
    like_bash(
        script,
        &[],
        "<a> <b> <c> <da> <b c> <d-a-b c-d> \n<a> <b c> <d> \n",
        0,
    );
}

#[test]
fn subscripts_before_the_first_element_are_reported() {
    for (script, out, status) in [
        ("a=(1); echo \"[${a[-7]}]\" $?", "[] 0\n", 0),
        (
            "a=(1); echo $((a[-7])) $((a[-7]=3)); echo $?",
            "0 3\n0\n",
            0,
        ),
        ("a=(1); i=-9; a[i]=1; echo not reached", "", 1),
        ("a=(1); : ${a[-7]:=3}; echo not reached", "", 1),
        ("a=(1); echo ${#a[ -3 ]}; echo not reached", "", 1),
        (
            "a=(1); unset 'a[2-11]'; echo $?; declare 'a[-5]=1'; echo $?; declare -p a",
            "1\n1\ndeclare -a a=([0]=\"1\")\n",
            0,
        ),
        (
            "a=(1); printf -v 'a[-7]' %s x; echo $?; read 'a[-7]' <<< x; echo $?; declare -p a",
            "1\n1\ndeclare -a a=([0]=\"1\")\n",
            0,
        ),
    ] {
        like_bash(script, &[], out, status);
    }
}

#[test]
fn read_assigns_array_elements() {
    like_bash(
        "read 'a[1]' 'b[x+1]' <<< 'x y z'; declare -A m; read -N 2 'm[k]' <<< vw; declare -p a b m",
        &[],
        "declare -a a=([1]=\"x\")\ndeclare -a b=([1]=\"y z\")\ndeclare -A m=([k]=\"vw\" )\n",
        0,
    );
}

#[test]
fn builtin_refusals_as_bash_words_them() {
    for (script, out) in [
        // Without -v, unset may name a function by any name.
        (
            "/x() { echo f; }; /x; unset /bin/sh /x; echo $?; unset -v /y; echo $?",
            "f\n0\n1\n",
        ),
        // Functions take no value attributes and are not assigned.
        (
            "a() { :; }; declare -f -a a; echo $?; declare -fn a; echo $?",
            "1\n1\n",
        ),
        (
            "declare -f f='() { :; }'; echo $?; declare -F f=1; echo $?",
            "1\n1\n",
        ),
        (
            "set +h; hash -p /bin/sh sh; echo $?; hash; echo $?",
            "1\n1\n",
        ),
    ] {
        like_bash(script, &[], out, 0);
    }
}

#[test]
fn umask_reads_and_refuses_as_bash() {
    let script = "umask 022; { umask 09; umask -S u=rwx:g=rwx:o=rx; umask u:rwx; umask -i; umask g=u; umask u=rwx,; } 2>&1; umask; umask -p; umask -pS; umask -S u=rwx,g=rx,o=; umask a+w; umask; umask =r; umask";
    like_bash(
        script,
        &[],
        "sh: line 1: umask: 09: octal number out of range
sh: line 1: umask: `:': invalid symbolic mode character
sh: line 1: umask: `:': invalid symbolic mode operator
sh: line 1: umask: -i: invalid option
umask: usage: umask [-p] [-S] [mode]
sh: line 1: umask: `u': invalid symbolic mode character
sh: line 1: umask: `\0': invalid symbolic mode operator
0022
umask 0022
umask -S u=rwx,g=rx,o=rx
u=rwx,g=rx,o=
0005
0333
",
        0,
    );
}

#[test]
fn kill_refusals_as_bash_words_them() {
    like_bash(
        "{ kill abc; kill -s; echo $?; kill -sFOO 1; kill -n 99 1; kill -INT ''; kill -s 0 $$; echo $?; } 2>&1",
        &[],
        "sh: line 1: kill: abc: arguments must be process or job IDs
sh: line 1: kill: -s: option requires an argument
1
sh: line 1: kill: FOO: invalid signal specification
sh: line 1: kill: 99: invalid signal specification
sh: line 1: kill: `': not a pid or valid job spec
0
",
        0,
    );
}

#[test]
fn readonly_refusals_and_posix_assignment_errors() {
    for (script, out, status) in [
        // A refused prefix assignment is reported once, and the command runs.
        (
            "readonly V=1; { V=7 true; echo $?; } 2>&1",
            "sh: line 1: V: readonly variable\n0\n",
            0,
        ),
        (
            "readonly V=1; declare +r V 2>&1; echo $?",
            "sh: line 1: declare: V: readonly variable\n1\n",
            0,
        ),
        // In POSIX mode it is an assignment error: the command does not
        // run, and before a special builtin the script ends.
        (
            "set -o posix; readonly V=1; V=2 echo no 2>/dev/null; echo $?",
            "",
            1,
        ),
        (
            "set -o posix; readonly V=1; V=2 : 2>/dev/null; echo no",
            "",
            127,
        ),
        // `return` outside a function: status 2; POSIX mode ends the
        // script unless it came through `command`.
        ("return 2>/dev/null; echo $?", "2\n", 0),
        (
            "set -o posix; command return 2>/dev/null; echo $?; return 2>/dev/null; echo no",
            "2\n",
            2,
        ),
        // POSIX mode: function names are names, and not special builtins'.
        ("set -o posix; f-x() { :; } 2>/dev/null; echo no", "", 2),
        ("set -o posix; eval() { :; } 2>/dev/null; echo no", "", 2),
        (
            "set -o posix; shift 3 2>&1; echo $?",
            "sh: line 1: shift: 3: shift count out of range\n1\n",
            0,
        ),
    ] {
        like_bash(script, &[], out, status);
    }
}

#[test]
fn lines_after_an_abandoned_command_count_from_its_line() {
    // In POSIX mode the line of a refused prefix assignment is abandoned,
    // and the script goes on.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("p.sh"),
        "set -o posix\nreadonly V=1\nV=2 echo no\necho $?\nV=3 echo no; echo no\necho end\n",
    )
    .unwrap();
    like_bash_in(dir.path(), &[], "$BASH p.sh 2>/dev/null", "1\nend\n", 0);
    // bash's reader takes its line from the command that failed.
    let dir = tempfile::tempdir().unwrap();
    like_bash_in(
        dir.path(),
        &[],
        "readonly v=1\nfor i in 1; do\n  v=2\n  echo no\n\n\ndone\necho $LINENO\n{\n  v=3\n}\necho $LINENO\nf()\n{\n  :\n}\nreadonly -f f\nf()\n{\n  :\n}\necho $LINENO",
        "4\n7\n17\n",
        0,
    );
}

#[test]
fn complete_lists_in_the_order_of_bash_table() {
    like_bash(
        "complete -f cat ln gzip; complete -c nohup type eval; complete -v unset; complete -W 'a b' cat; complete -r ln; complete -d ln; complete -p",
        &[],
        "complete -c nohup\ncomplete -c type\ncomplete -d ln\ncomplete -v unset\ncomplete -c eval\ncomplete -f gzip\ncomplete -W 'a b' cat\n",
        0,
    );
}

#[test]
fn printf_conversions_and_refusals_as_bash() {
    for (script, out, status) in [
        // `%n` stores the bytes written so far.
        (
            "printf '  %s %s  \\n%n' ab cd vv; echo \"$vv\"; printf 'ab%n' 'a[1]' 2>/dev/null; echo \" $?\"",
            "  ab cd  \n10\nab 1\n",
            0,
        ),
        // `\x` with no digit is reported and printed as it is.
        (
            "printf '\\x|%b\\n' 'a\\x' 2>&1",
            "sh: line 1: printf: missing hex digit for \\x\nsh: line 1: printf: missing hex digit for \\x\n\\x|a\\x\n",
            0,
        ),
        // A missing conversion names the whole specification.
        (
            "printf '%-5.3' 2>&1; echo \" $?\"",
            "sh: line 1: printf: `%-5.3': missing format character\n 1\n",
            0,
        ),
        // A time format not closed by `)T` is text after a warning; its
        // parentheses nest.
        (
            "printf '%(%s)x\\n' 5 2>&1; TZ=UTC printf '%(%Y (%m))T\\n' 0",
            "sh: line 1: printf: warning: `x': invalid time format specification\n%(5)x\n1970 (01)\n",
            0,
        ),
    ] {
        like_bash(script, &[], out, status);
    }
}

#[test]
fn signal_lists_as_bash_prints_them() {
    for script in [
        "kill -l",
        "trap -l",
        "kill -l 1 129 34 64 50 0 EXIT RTMIN+3 sigrtmax-2",
        "kill -l 4096 2>&1; echo $?",
        "set -o posix; kill -l; trap '' RTMIN+2; trap -p | head -3; trap -p INT 32 RTMIN+2",
    ] {
        let bash = bash().args(["-c", script]).output();
        let Ok(bash) = bash else { continue };
        let out = String::from_utf8_lossy(&bash.stdout).replace("bash: ", "sh: ");
        like_bash(script, &[], &out, 0);
    }
}

#[test]
fn builtins_details_bash_scripts_meet() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s4.sub"), "set -- m n o p\n").unwrap();
    std::fs::write(dir.path().join("s5.sub"), "shift\n").unwrap();
    for (script, out, status) in [
        // A sourced file's `set --` outlasts the arguments it was given;
        // other changes do not.
        (
            "set -- a b c; . ./s4.sub x y; echo \"$@\"; set -- a b; . ./s5.sub x y; echo \"$@\"",
            "m n o p\na b\n",
            0,
        ),
        // POSIX mode: `.` does not look in the current directory, and a
        // file it cannot find ends the script.
        (
            "set -o posix; . s4.sub 2>&1; echo no",
            "sh: line 1: .: s4.sub: file not found\n",
            1,
        ),
        (
            "set -o posix; command . s4.sub 2>/dev/null; echo $?",
            "1\n",
            0,
        ),
        // `exec -l` puts a `-` before the name; `exec -c` empties the
        // environment.
        (
            "(exec -l -a name $BASH -c 'echo $0'); (export FOO=1; exec -c env) | wc -l",
            "-name\n0\n",
            0,
        ),
        ("ulimit -c -S -- 0; ulimit -S -c", "0\n", 0),
        // A builtin's prefix assignment is exported while it runs.
        (
            "X=1; X=2 declare -p X; declare -p X",
            "declare -x X=\"2\"\ndeclare -- X=\"1\"\n",
            0,
        ),
        // `@` is a key of an associative array for `-v`.
        (
            "declare -A A=([x]=1); [ -v 'A[@]' ] || echo unset; A[@]=2; [ -v 'A[@]' ] && echo set",
            "unset\nset\n",
            0,
        ),
        (
            "declare -f -p nof 2>&1; echo $?",
            "sh: line 1: declare: nof: not found\n1\n",
            0,
        ),
    ] {
        like_bash_in(dir.path(), &[], script, out, status);
    }
}

#[test]
fn declare_g_in_a_function_is_the_global() {
    for (script, out, status) in [
        (
            "f() { local -a v; local w; g; echo \"f: ${v[@]} $w\"; }; g() { aux=v; declare -ga \"$aux=( a b )\"; declare -g w=one; echo \"g: ${v[@]} $w\"; }; f; echo \"top: ${v[@]} $w\"",
            "g:  \nf:  \ntop: a b one\n",
            0,
        ),
        (
            "f() { local x=1; declare -g x=2 y; declare -gi z=1+1; echo $x; }; f; echo $x $z; declare -p y",
            "1\n2 2\ndeclare -- y\n",
            0,
        ),
        // Converting the global's kind is refused: in a function the
        // function goes on; at the top level the line is abandoned.
        (
            "declare -a u=(); f() { declare -g -A u=() 2>/dev/null; echo \"in f $?\"; }; f; declare -A u=() 2>/dev/null; echo no",
            "in f 1\n",
            1,
        ),
        (
            "declare -a u=(); declare -A u 2>/dev/null; echo $?",
            "1\n",
            0,
        ),
    ] {
        like_bash(script, &[], out, status);
    }
}

#[test]
fn locals_arrays_and_the_environment_as_bash_keeps_them() {
    for (script, out, status) in [
        // A local with no value leaves the outer value in the environment.
        (
            "export V=abc; f() { local V; echo \"[$V]\"; printenv V; V=1; printenv V; unset V; printenv V; }; f",
            "[]\nabc\n1\nabc\n",
            0,
        ),
        // A string given to a local array goes to element 0.
        (
            "f() { local -a m=(); local -r m=0; declare -p m; }; f",
            "declare -ar m=([0]=\"0\")\n",
            0,
        ),
        // A local compound over a read-only name is refused, and the
        // function goes on.
        (
            "readonly q=1; f() { local q=(5) 2>/dev/null; echo \"in $?\"; }; f 2>/dev/null; echo $q",
            "in 1\n1\n",
            0,
        ),
        // An existing variable made associative keeps its string at 0, in
        // bash's smaller table (and so its order).
        (
            "x=help; declare -A x; declare -p x; q=1; declare -A q=([zero]=0 [one]=1); declare -p q; q=([zero]=0 [one]=1 [two]=2); declare -p q; declare -A n=([zero]=0 [one]=1); declare -p n",
            "declare -A x=([0]=\"help\" )\ndeclare -A q=([zero]=\"0\" [one]=\"1\" )\ndeclare -A q=([two]=\"2\" [zero]=\"0\" [one]=\"1\" )\ndeclare -A n=([one]=\"1\" [zero]=\"0\" )\n",
            0,
        ),
    ] {
        like_bash(script, &[], out, status);
    }
}

#[test]
fn function_scopes_as_bash_keeps_them() {
    for (script, out, status) in [
        // `export`/`readonly` of the call's own binding outlasts the call.
        (
            "f() { export x; }; x=4 f; declare -p x; h() { export z; z=9; }; z=1 h; declare -p z; g() { readonly y; }; y=5 g; declare -p y",
            "declare -x x=\"4\"\ndeclare -x z=\"9\"\ndeclare -rx y=\"5\"\n",
            0,
        ),
        // Unset, the call's binding keeps its export.
        (
            "f() { local v=x; unset v; declare -p v; }; v=t f",
            "declare -x v\n",
            0,
        ),
        // A caller's read-only local can be made local; a global cannot.
        (
            "a() { local x=1; local y=(2); echo \"$x ${y[0]}\"; }; b() { local -r x=0 y=0; a; }; b; readonly g=1; c() { local g=2; }; c 2>/dev/null; echo $?",
            "1 2\n1\n",
            0,
        ),
        // `local -I`: the value where the function was called.
        (
            "v=g; f() { local $1 v; declare -p v; }; f; f -I",
            "declare -- v\ndeclare -- v=\"g\"\n",
            0,
        ),
        // An element or array before a command binds nothing.
        (
            "f() { declare -p e >/dev/null 2>&1; echo $?; }; e[0]=1 f 2>/dev/null; a=(1) true; declare -p a 2>/dev/null; echo $?",
            "1\n1\n",
            0,
        ),
        // IGNOREEOF and ignoreeof go together.
        (
            "IGNOREEOF=3; shopt -o ignoreeof; unset IGNOREEOF; shopt -o ignoreeof; set -o ignoreeof; echo $IGNOREEOF",
            "ignoreeof      \ton\nignoreeof      \toff\n10\n",
            0,
        ),
        // The EXIT trap of an `exit` in a function runs inside it.
        (
            "trap 'echo trap:$FUNCNAME $?' EXIT; f() { exit 3; }; f",
            "trap:f 3\n",
            3,
        ),
        // Keys of compound assignments are not tilde-expanded; `@` and a
        // leading `~` are quoted when printed.
        (
            "declare -A c=([~]=4 [@]=1 [a~b]=5); declare -p c",
            "declare -A c=([\"@\"]=\"1\" [\"~\"]=\"4\" [a~b]=\"5\" )\n",
            0,
        ),
    ] {
        like_bash(script, &[], out, status);
    }
}

#[test]
fn environment_names_the_shell_cannot_hold_pass_through() {
    let r = std::process::Command::new(env!("CARGO_BIN_EXE_rush"))
        .args(["-c", "printenv 'v[0]'"])
        .env("v[0]", "help")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&r.stdout), "help\n");
}

#[test]
fn arrays_made_from_strings_and_inherited_locals() {
    for (script, out, status) in [
        // `declare -a` of a string keeps it at 0; a local made again as an
        // array starts empty.
        (
            "x=5; declare -a x; declare -p x; f() { local y=3; local -a y; declare -p y; }; f",
            "declare -a x=([0]=\"5\")\ndeclare -a y=()\n",
            0,
        ),
        // `localvar_inherit`: whole arrays are inherited, strings become
        // element 0, and a kind that cannot convert is refused.
        (
            "shopt -s localvar_inherit; a=(X) s=X; f() { local -a a s; declare -p a s; }; f; g() { local a+=(Y) s+=(Y); declare -p a s; }; g; h() { local -a a+=Y s+=Y; declare -p a s; }; h",
            "declare -a a=([0]=\"X\")\ndeclare -a s=([0]=\"X\")\ndeclare -a a=([0]=\"X\" [1]=\"Y\")\ndeclare -a s=([0]=\"X\" [1]=\"Y\")\ndeclare -a a=([0]=\"XY\")\ndeclare -a s=([0]=\"XY\")\n",
            0,
        ),
        (
            "shopt -s localvar_inherit; declare -a v=([0]=12); f() { declare -A v+=([0]=X) 2>/dev/null; echo $?; declare -p v; }; f",
            "1\ndeclare -a v=([0]=\"12\")\n",
            0,
        ),
    ] {
        like_bash(script, &[], out, status);
    }
}

#[test]
fn return_trap_lines_and_frames_as_bash() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.sh"), "echo in\necho x\n").unwrap();
    like_bash_in(
        dir.path(),
        &[],
        // A function run to its end is at its definition's line; after
        // `return`, at the return's; a sourced file at the `.` command's,
        // with its own frame gone.
        "f() {\n  echo a\n}\nset -T\ntrap 'echo ret $LINENO ${FUNCNAME[0]}' RETURN\nf\ng() {\n  return\n}\ng\nh() {\n  . ./s.sh\n}\nh\ntrap - RETURN\nk() { caller x 2>&1; echo $?; }\nk",
        "a\nret 1 f\nret 8 g\nin\nx\nret 12 h\nret 11 h\nenvironment: line 16: caller: x: invalid number\ncaller: usage: caller [expr]\n2\n",
        0,
    );
}

#[test]
fn prefix_assignments_reach_commands_run_by_builtins() {
    like_bash(
        "FOO=1 eval 'printenv FOO'; FOO=2 command printenv FOO; BAR=3 . /dev/stdin <<< 'printenv BAR'; printenv FOO BAR; echo $?",
        &[],
        "1\n2\n3\n1\n",
        0,
    );
}

#[test]
fn extdebug_as_bash_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.sh"), "echo in\n").unwrap();
    for (script, out) in [
        // extdebug sets -T and -E with it; `set +T` stops the tracing.
        (
            "shopt -s extdebug; echo $-; shopt -u extdebug; echo $-",
            "hBETc\nhBc\n",
        ),
        (
            "shopt -s extdebug\nf() {\n  echo a\n}\ntrap 'echo dbg $LINENO' DEBUG\nset +T\nf\n. ./s.sh",
            "dbg 6\ndbg 7\na\ndbg 8\nin\n",
        ),
        // BASH_ARGV and BASH_ARGC: every frame's arguments, innermost first.
        (
            "shopt -s extdebug; f() { echo \"${BASH_ARGV[@]}|${BASH_ARGC[@]}\"; g q; }; g() { echo \"${BASH_ARGV[@]}|${BASH_ARGC[@]}\"; }; f a b; declare -p BASH_ARGC",
            "b a|2 0\nq b a|1 2 0\ndeclare -a BASH_ARGC=([0]=\"0\")\n",
        ),
    ] {
        like_bash_in(dir.path(), &[], script, out, 0);
    }
}

#[test]
fn compound_assignment_syntax_error_discards_only_its_line() {
    for (script, out, status) in [
        // bash reports it, sets status 1 and reads on from the next line;
        // the rest of the line (and any construct open on it) is dropped.
        (
            "x=(a & b); echo same\necho $?\nif true; then y=(a ; b); echo in; fi\necho after $?",
            "1\nafter 1\n",
            0,
        ),
        ("f() { x=(a & b); echo inf; }\necho after", "after\n", 0),
        ("x=(a b", "", 1),
        (
            "eval 'x=(a & b); echo same\necho next'; echo st=$?",
            "next\nst=0\n",
            0,
        ),
    ] {
        like_bash(script, &[], out, status);
    }
    // A POSIX shell that is not interactive stops there.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.sh"),
        "set -o posix\nx=(a & b)\necho hi\n",
    )
    .unwrap();
    like_bash_in(dir.path(), &[], "$BASH s.sh; echo rc=$?", "rc=1\n", 0);
}

#[test]
fn declare_of_an_element_as_bash() {
    for (script, out) in [
        // With -a, a value in parentheses is the whole array's.
        (
            "declare -a e[10]=test; declare -p e; declare -a e[10]='(test)'; declare -p e",
            "declare -a e=([10]=\"test\")\ndeclare -a e=([0]=\"test\")\n",
        ),
        (
            "declare -a f[2]='(a b)'; declare -p f",
            "declare -a f=([0]=\"a\" [1]=\"b\")\n",
        ),
        // Without, a new variable takes the text as its element, warned.
        (
            "declare g[2]='(a b)' 2>&1; declare -p g",
            "sh: line 1: warning: g[2]=(a b): quoted compound array assignment deprecated\ndeclare -a g=([2]=\"(a b)\")\n",
        ),
        // The attributes come first: -i evaluates, -r refuses.
        (
            "declare -i h[1]=3+4; declare -u u[0]=abc; declare -p h u",
            "declare -ai h=([1]=\"7\")\ndeclare -au u=([0]=\"ABC\")\n",
        ),
        (
            "declare -r c[1]=5 2>&1; declare -p c",
            "sh: line 1: c: readonly variable\ndeclare -ar c=()\n",
        ),
        // No value: an array, declared.
        ("declare -r c[100]; declare -p c", "declare -ar c\n"),
        // A nameref given an element stops being one.
        (
            "declare -n r=q; declare r[1]=4 2>&1; declare -p r",
            "sh: line 1: warning: r: removing nameref attribute\ndeclare -a r=([1]=\"4\")\n",
        ),
    ] {
        like_bash(&format!("{{ {script}; }} 2>&1"), &[], out, 0);
    }
    // `name[i]=(…)` is read, and refused when it runs: the rest of the
    // line is abandoned.
    like_bash(
        "exec 2>&1; d=(); d[7]=(abd); echo not here\necho $?",
        &[],
        "sh: line 1: d[7]: cannot assign list to array member\n1\n",
        0,
    );
}

#[test]
fn unset_of_an_element_as_bash() {
    for (script, out) in [
        // Nothing set: nothing done, nothing evaluated.
        ("unset c[2] c[*] 'c[1/0]'; echo $?", "0\n"),
        // `*` and `@` empty an indexed array; a string's are refused, and
        // its element 0 is the variable.
        (
            "a=(1 2); unset a[*]; declare -p a; x=s; unset x[@]; echo $?; unset x[1]; echo $?; unset x[0]; echo ${x-gone}",
            "declare -a a=()\nsh: line 1: unset: x: not an array variable\n1\nsh: line 1: unset: x: not an array variable\n1\ngone\n",
        ),
        (
            "readonly r=(1 2); unset r[*]; echo $?; declare -A A=([*]=1 [k]=2); unset A[*]; declare -p A",
            "sh: line 1: unset: r: cannot unset: readonly variable\n1\ndeclare -A A=([k]=\"2\" )\n",
        ),
    ] {
        like_bash(&format!("{{ {script}; }} 2>&1"), &[], out, 0);
    }
}

#[test]
fn variable_listings_as_bash() {
    for (script, out) in [
        // Every attribute asked for must be there.
        (
            "declare -a c=(1); readonly c; declare -r x=1; declare -A B=(); declare -ar | grep -v BASH_VERSINFO; readonly -a | grep -v BASH_VERSINFO; export -a; declare -Ax | grep -c .; :",
            "declare -ar c=([0]=\"1\")\ndeclare -ar c=([0]=\"1\")\n0\n",
        ),
        // POSIX mode: as readonly and export commands.
        (
            "set -o posix; declare -a c=(1); readonly c x=1; export X=2 Y; readonly | grep -e ' c' -e ' x'; export | grep -e ' X' -e ' Y'",
            "readonly -a c=([0]=\"1\")\nreadonly x=\"1\"\nexport X=\"2\"\nexport Y\n",
        ),
        // FUNCNAME outside a function is declared with no value; DIRSTACK
        // and the other computed variables are listed as last read.
        (
            "declare -a | grep -e DIRSTACK -e FUNCNAME; set | grep -c -e ^RANDOM -e ^LINENO -e ^SECONDS; echo $RANDOM $LINENO >/dev/null; echo ${DIRSTACK[0]} >/dev/null; set | grep -c -e ^RANDOM -e ^LINENO -e ^DIRSTACK=.*/",
            "declare -a DIRSTACK=()\ndeclare -a FUNCNAME\n0\n3\n",
        ),
        // Only an interactive shell has PS1 and PS2; OPTERR is 1.
        (
            "echo \"[${PS1-unset}][${PS2-unset}][$OPTERR]\"",
            "[unset][unset][1]\n",
        ),
    ] {
        like_bash(&format!("{{ {script}; }} 2>&1"), &[], out, 0);
    }
}

#[test]
fn bad_subscripts_in_assignments_as_bash() {
    for (script, out) in [
        // `a[]=x`, `a[*]=x` abandon the line; an associative array takes
        // `*` and `@` as keys.
        (
            "b=(1); b[]=x; echo not here\necho $?; b[*]=x; echo not here\ndeclare -A A; A[*]=x; A[@]=y; declare -p A",
            "sh: line 1: b[]: bad array subscript\n1\nsh: line 2: b[*]: bad array subscript\ndeclare -A A=([\"*\"]=\"x\" [\"@\"]=\"y\" )\n",
        ),
        // In a list, each bad element is reported and skipped; a negative
        // index counts back from the elements so far.
        (
            "d=([]=1 [ ]=2 [*]=3 [-9]=4 q 5 [-1]=x); declare -p d",
            "sh: line 1: []=1: bad array subscript\nsh: line 1: [*]=3: cannot assign to non-numeric index\nsh: line 1: [-9]=4: bad array subscript\ndeclare -a d=([0]=\"2\" [1]=\"q\" [2]=\"x\")\n",
        ),
        (
            "declare -r a[]=x; declare -p a",
            "sh: line 1: a[]: bad array subscript\ndeclare -ar a=()\n",
        ),
        // eval and let take `name=(…)` as a word (bash's parser does).
        (
            "eval foo=(\"a b\" c); declare -p foo; let y=(1+2)*3; echo $y",
            "declare -a foo=([0]=\"a\" [1]=\"b\" [2]=\"c\")\n9\n",
        ),
    ] {
        like_bash(&format!("exec 2>&1; {script}\n:"), &[], out, 0);
    }
}

#[test]
fn nounset_and_indirect_messages_as_bash() {
    stderr_like_bash(
        &[
            // `${#a[i]}` names only the variable, and is 0 for a missing
            // element of a set array.
            (
                "set -u; (echo ${#n[4]}); (echo ${#n[@]}); a=(1); echo ${#a[3]}; declare -A A; (echo ${#A[k]}); x=s; (echo ${#x[0]})",
                "sh: line 1: n: unbound variable\nsh: line 1: n: unbound variable\n0\nsh: line 1: A: unbound variable\nsh: line 1: x: unbound variable\n",
            ),
            // Indirection: an unset element of a set variable is nothing, or
            // with -u an error naming the expression.
            (
                "a=(); echo \"[${!a[2]}][${!a}]\"; (echo ${!y}); x=; (echo ${!x}); set -u; (echo ${!a[2]}); x=nope; (echo ${!x})",
                "[][]\nsh: line 1: y: invalid indirect expansion\nsh: line 1: : invalid variable name\nsh: line 1: !a[2]: unbound variable\nsh: line 1: !x: unbound variable\n",
            ),
            // In double quotes a value's single quotes are text, but the
            // `${…}` ends as if they quoted.
            (
                "echo \"${u-'\"'hey}\" \"${u-'\"hey'}\" \"${u-'}'}\"",
                "''hey 'hey' '}'\n",
            ),
        ],
        "\n:",
    );
}

#[test]
fn arithmetic_expands_subscripts_once() {
    stderr_like_bash(
        &[
            // The key is the variable's text: nothing in it runs, and `]`
            // does not end the subscript.
            (
                "declare -A A; k='x],b[$(echo ran >&2)'; (( A[$k]++ )); (( A[\"$k\"]++ )); (( A['$k']++ )); let 'A[$k]+=5'; declare -p A; echo $(( A[$k] ))",
                "declare -A A=([\"x],b[\\$(echo ran >&2)\"]=\"7\" [\"\\$k\"]=\"1\" )\n7\n",
            ),
            // Outside a subscript single quotes stay for the evaluator.
            (
                "declare -A A; k=']'; (( 'A[$k]++' ))\necho $?",
                "sh: line 1: ((: 'A[\\]]++' : syntax error: operand expected (error token is \"'A[\\]]++' \")\n1\n",
            ),
            // [[ ]]: arithmetic operands and -v as well.
            (
                "declare -A A; k='$(echo ran >&2)'; A[$k]=3; [[ A[$k] -eq 3 ]]; echo $?; [[ -v A[$k] ]]; echo $?; [[ -v A['$k'] ]]; echo $?",
                "0\n0\n1\n",
            ),
            // An associative array from a list of keys and values.
            (
                "declare -A A=(a 1 b 2 c); declare -p A; x='k v'; declare -A B=($x \"$x\"); declare -p B",
                "declare -A A=([c]=\"\" [b]=\"2\" [a]=\"1\" )\ndeclare -A B=([\"k v\"]=\"k v\" )\n",
            ),
        ],
        "",
    );
    // A subscript's error abandons the line (in a script), and has no
    // `((:` before it.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.sh"),
        "a=(1); (( a[1/0] )); echo not here\necho $?\n",
    )
    .unwrap();
    like_bash_in(
        dir.path(),
        &[],
        "$BASH s.sh 2>&1",
        "s.sh: line 1: 1/0: division by 0 (error token is \"0\")\n1\n",
        0,
    );
}

#[test]
fn list_followed_by_text_is_a_string() {
    like_bash(
        "typeset -i a; a=(4*3)/2; echo $a; x=1; c=($x \"y z\")q; echo \"$c\"",
        &[],
        "6\n(1 y z)q\n",
        0,
    );
}

#[test]
fn arithmetic_subscript_quoting_as_bash() {
    stderr_like_bash(
        &[
            // Nested subscripts as written; `${a[a[0]]}` reads them too.
            (
                "a=0; echo $(( a[a[0]] )) ${a[a[a[0]]]}; b=(5 6); i=1; echo $(( b[b[i-1]-5] )) ${b[b[0]-4]}",
                "0 0\n5 6\n",
            ),
            // An index's double quotes go, its single quotes stay.
            (
                "a=(0 1); let 'a[\" \"]=11'; declare -p a; (echo ${a[' ']})",
                "declare -a a=([0]=\"11\" [1]=\"1\")\nsh: line 1: ' ': syntax error: operand expected (error token is \"' '\")\n",
            ),
            // `let` with assoc_expand_once takes a key as written.
            (
                "shopt -s assoc_expand_once; declare -A a; let 'a[\" \"]=1'; declare -p a",
                "declare -A a=([\"\\\" \\\"\"]=\"1\" )\n",
            ),
        ],
        "\n:",
    );
}

#[test]
fn element_names_and_declare_flags_as_bash() {
    stderr_like_bash(
        &[
            // `A[]]` is not one element: refused by read, printf -v, declare.
            (
                "declare -A A; read 'A[]]' <<< X; printf -v 'A[]]' %s X; declare 'A[]]=X'; declare -p A",
                "sh: line 1: read: `A[]]': not a valid identifier\nsh: line 1: printf: `A[]]': not a valid identifier\nsh: line 1: declare: `A[]]=X': not a valid identifier\ndeclare -A A\n",
            ),
            // A subscript with a command substitution and blanks.
            (
                "a[$(echo 1) + 1]=5; declare -p a",
                "declare -a a=([2]=\"5\")\n",
            ),
            // -ai with a quoted list, +i before a list.
            (
                "declare -ai f='(1 2 xx 3)'; echo \"${f[@]}\"; declare -i -a g=(1+1); declare +i g=(hello world); declare -p g",
                "1 2 0 3\ndeclare -a g=([0]=\"hello\" [1]=\"world\")\n",
            ),
        ],
        "",
    );
}

#[test]
fn assoc_keys_as_bash() {
    stderr_like_bash(
        &[
            // Only a subscript written `@` or `*` means every element.
            (
                "declare -A A; k=@; A[$k]=at; A[*]=star; A[!]=bang; echo ${A[$k]}; k='*'; echo ${A[$k]}",
                "at\nstar\n",
            ),
            // A quote in a subscript must close; with assoc_expand_once a key
            // is taken as written.
            (
                "declare -A a; b=\"80's\"; read a[$b] <<< X; shopt -s assoc_expand_once; read a[$b] <<< Y; k=']'; printf -v a[$k] %s Z; declare -p a",
                "sh: line 1: read: `a[80's]': not a valid identifier\ndeclare -A a=([\"80's\"]=\"Y\" [\"]\"]=\"Z\" )\n",
            ),
            (
                "shopt -s assoc_expand_once; declare -A m; declare m[\"x[y\"]=1; typeset m[\"x]y\"]=2; v=k; m['$v']=3; unset 'm[$v]'; declare -p m; let 'm[$v]++'; declare -p m",
                "sh: line 1: typeset: `m[x]y]=2': not a valid identifier\ndeclare -A m=([\"x[y\"]=\"1\" )\ndeclare -A m=([\"x[y\"]=\"1\" [\"\\$v\"]=\"1\" )\n",
            ),
            // A local's kind is not converted.
            (
                "f() { declare -a a; declare -A a; declare -p a; }; f",
                "environment: line 1: declare: a: cannot convert indexed to associative array\ndeclare -a a\n",
            ),
        ],
        "",
    );
}

#[test]
fn wait_p_and_wait_n_with_ids() {
    like_bash(
        "{ sleep 0.2; exit 4; } & { sleep 0.4; exit 5; } & b=$!; { sleep 1; exit 6; } &\n\
         wait -p P -n %2 %3; echo $? $([ \"$P\" = \"$b\" ] && echo ok); wait -n -p Q; echo $? ${Q:+set}",
        &[],
        "5 ok\n6 set\n",
        0,
    );
}

#[test]
fn unset_and_test_take_subscripts_as_bash() {
    stderr_like_bash(
        &[
            // `unset a[$k]` written as an element: its key as expanded once;
            // quoted, it is expanded again.
            (
                "declare -A a; k='$(echo foo)'; a[$k]=1; unset -v a[\"$k\"]; declare -p a; a[$k]=2; unset 'a[$k]'; declare -p a; a[foo]=3; a[$k]=4; unset a[$k]; declare -p a",
                "declare -A a=()\ndeclare -A a=()\ndeclare -A a=([\"\\$(echo foo)\"]=\"4\" [foo]=\"3\" )\n",
            ),
            // BASH_COMPAT=51: `unset a[@]` unsets the array.
            (
                "a=(1 2); unset a[@]; declare -p a; BASH_COMPAT=51; unset a[@]; declare -p a; :",
                "declare -a a=()\nsh: line 1: declare: a: not found\n",
            ),
            // test -v with assoc_expand_once takes the key as written.
            (
                "declare -A a; k='$(echo foo)'; a[$k]=1; shopt -s assoc_expand_once; test -v a[\"$k\"]; echo $?; [[ -v a[$k] ]]; echo $?",
                "0\n0\n",
            ),
            // No process substitution in a subscript of [[ ]].
            ("a=(0); [[ a[7<(4+2)] -le 0 ]]; echo $?", "0\n"),
            // printf -v into every element is refused.
            (
                "a=(1); printf -v a[@] %s x; echo $?",
                "sh: line 1: a[@]: bad array subscript\n1\n",
            ),
        ],
        "",
    );
}

#[test]
fn quoted_element_names_and_posix_single_quotes() {
    stderr_like_bash(
        &[
            // With assoc_expand_once an unquoted `A[$k]` is as written, a
            // quoted one is checked as ever.
            (
                "shopt -s assoc_expand_once; declare -A A; k=']'; read \"A[$k]\" <<< X; read A[$k] <<< Y; declare -p A",
                "sh: line 1: read: `A[]]': not a valid identifier\ndeclare -A A=([\"]\"]=\"Y\" )\n",
            ),
            // In POSIX mode single quotes in "${x-…}" do not hide a `}`.
            (
                "echo \"${u-'}'z}\"; set -o posix\necho \"${u-'}'z}\"",
                "'}'z\n''z}\n",
            ),
        ],
        "",
    );
}

#[test]
fn hostname_and_shell_are_plain_variables() {
    like_bash(
        "HOSTNAME=foo; echo $HOSTNAME; declare -p HOSTNAME; SHELL=/x; echo $SHELL; unset SHELL; echo ${SHELL-unset}",
        &[],
        "foo\ndeclare -- HOSTNAME=\"foo\"\n/x\nunset\n",
        0,
    );
}

/// `bind` outside line editing: bash warns on every call and still
/// answers from, and changes, the default keymaps (bash-completion reads
/// `bind -v`; start-up files run `bind` in scripts too). Before, rush had
/// no `bind` at all (command not found, 127).
#[test]
fn bind_without_line_editing() {
    let w = "sh: line 1: bind: warning: line editing not enabled\n";
    stderr_like_bash(
        &[
            (
                "bind -q accept-line; echo rc=$?",
                &format!("{w}accept-line can be invoked via \"\\C-j\", \"\\C-m\".\nrc=0\n"),
            ),
            (
                "bind -q nonsuch; echo rc=$?",
                &format!("{w}sh: line 1: bind: `nonsuch': unknown function name\nrc=1\n"),
            ),
            (
                "bind -u kill-line 2>/dev/null; bind -q kill-line; echo rc=$?",
                &format!("{w}kill-line is not bound to any keys.\nrc=1\n"),
            ),
            (
                "bind -r '\\C-a' 2>/dev/null; bind -q beginning-of-line",
                &format!(
                    "{w}beginning-of-line can be invoked via \"\\eOH\", \"\\e[1~\", \"\\e[H\".\n"
                ),
            ),
            (
                "bind -m foo -l; echo rc=$?",
                &format!("{w}sh: line 1: bind: `foo': invalid keymap name\nrc=1\n"),
            ),
            (
                "bind -Z; echo rc=$?",
                &format!(
                    "{w}sh: line 1: bind: -Z: invalid option\nbind: usage: bind [-lpsvPSVX] [-m keymap] [-f filename] [-q name] [-u name] [-r keyseq] [-x keyseq:shell-command] [keyseq:readline-function or readline-command]\nrc=2\n"
                ),
            ),
            (
                "bind 'set completion-ignore-case on' 2>/dev/null; bind -v | grep ignore-case",
                &format!("{w}set completion-ignore-case on\n"),
            ),
            (
                "bind 'set nosuch on'; echo rc=$?",
                &format!("{w}readline: nosuch: unknown variable name\nrc=0\n"),
            ),
            (
                "bind -x '\"\\C-t\": echo \"hi there\"' 2>/dev/null; bind -X",
                &format!("{w}\"\\C-t\": \"echo \\\"hi there\\\"\"\n"),
            ),
            (
                "bind '\"\\C-x\\C-r\": \"macro text\"' 2>/dev/null; bind -s 2>/dev/null; bind -S",
                &format!("\"\\C-x\\C-r\": \"macro text\"\n{w}\\C-x\\C-r outputs macro text\n"),
            ),
            (
                "bind -f /nonexistent; echo rc=$?",
                &format!(
                    "{w}sh: line 1: bind: /nonexistent: cannot read: No such file or directory\nrc=1\n"
                ),
            ),
            (
                "bind -x nocolon; echo rc=$?",
                &format!(
                    "{w}sh: line 1: bind: nocolon: first non-whitespace character is not `\"'\nrc=1\n"
                ),
            ),
            (
                "bind 'Control-o: yank' 2>/dev/null; bind -m vi-command -q vi-put 2>/dev/null; bind -q yank",
                &format!(
                    "vi-put can be invoked via \"P\", \"p\".\n{w}yank can be invoked via \"\\C-o\", \"\\C-y\".\n"
                ),
            ),
            (
                "bind -V | grep -E 'keymap|timeout'",
                &format!("{w}keymap is set to `emacs'\nkeyseq-timeout is set to `500'\n"),
            ),
        ],
        "",
    );
    // The lists bash-completion and users read: every function name, and
    // every variable.
    like_bash("bind -l 2>/dev/null | wc -l", &[], "173\n", 0);
    like_bash("bind -v 2>/dev/null | wc -l", &[], "46\n", 0);
}

/// History in a script: `set -o history` reads HISTFILE (when no line was
/// added yet), HISTIGNORE keeps matching lines out (`&`: the line before),
/// `fc -l` lists through the last entry when the `fc` line itself was
/// ignored, `history -p` names the word it failed on, and two file
/// operations at once are refused. Before, the file was not read,
/// HISTIGNORE was not applied, `fc -l` dropped the last entry, and
/// `history -r -w` read the file.
#[test]
fn history_in_a_script() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("h.list"), "echo one\necho two\n").unwrap();
    like_bash_in(
        dir.path(),
        &[],
        "HISTFILE=h.list; HISTIGNORE='history*:fc*:&'; set -o history\n\
         echo three; echo three\n\
         echo three\n\
         history\n\
         fc -l\n",
        "three\nthree\nthree\n    1  echo one\n    2  echo two\n    3  echo three; echo three\n    4  echo three\n\
         1\t echo one\n2\t echo two\n3\t echo three; echo three\n4\t echo three\n",
        0,
    );
    stderr_like_bash(
        &[
            (
                "history -r -w /dev/null; echo rc=$?",
                "sh: line 1: history: cannot use more than one of -anrw\nrc=1\n",
            ),
            (
                "set -o history; echo a >/dev/null; history -p '!!:z'; echo rc=$?",
                "sh: line 1: history: !!:z: history expansion failed\nrc=1\n",
            ),
        ],
        "",
    );
}

/// `!` history expansion in a script (`set -o history -H`), as bash does
/// it line by line before parsing: word designators (`2-4`, `$`, `3*`),
/// modifiers (`:r`, `:t`, `:q`, `:gs/old/new/`), `!?str?:%`, the expanded
/// line shown on standard error, no expansion after `${`, `[`, inside
/// `$'…'` or in a comment, and `history -c` numbering from 1 again. Before, a script's
/// `!!` was a command name (`!!: command not found`).
#[test]
fn history_expansion_in_a_script() {
    script_like_bash(
        "exec 2>&1\nset -o history -H\necho a b c d e\necho !!:2-4 !$\necho dir/foo.c\n\
         echo !!:$:r !-2:3* !-2:$:t:q\necho foo.c foo.h\n!!:gs/foo/bar/\n\
         x=y; y=ok; echo ${!x} [!a] # !!\necho !?foo?:%\necho $'it\\'s!'\nhistory -c\necho c\nhistory\n",
        "a b c d e\necho b c d e\nb c d e\ndir/foo.c\necho dir/foo d e 'e'\ndir/foo d e e\n\
         foo.c foo.h\necho bar.c bar.h\nbar.c bar.h\nok [!a]\necho foo.h\nfoo.h\nit's!\nc\n    1  echo c\n    2  history\n",
        0,
    );
}

/// `history -d` takes a range (`2-3`, `-2--1`) and names the part out of
/// range, and `fc -s` applies each `pat=rep` everywhere, in turn; a prefix
/// no command starts with finds no command, and `-0` names none. Before,
/// a range was one bad number, `fc -s` replaced only the first match and
/// took a second `pat=rep` for the command, and `fc -l nosuch` was "out
/// of range".
#[test]
fn history_delete_ranges_and_fc_substitutions() {
    script_like_bash(
        "exec 2>&1\nHISTIGNORE='history*:fc*'\nset -o history\n\
         echo a >/dev/null\necho b >/dev/null\necho c >/dev/null\necho d >/dev/null\necho e >/dev/null\n\
         history -d 2-3\nhistory\nhistory -d -2--1; history\n\
         history -d 9-10; history -d 1-x; history -d 0\n\
         echo aa ab ac\nfc -s a=x\nfc -s x=4 b=8\nfc -s zz\nfc -l nosuch\nfc -s -0\nfc -0\n",
        "    1  echo a >/dev/null\n    2  echo d >/dev/null\n    3  echo e >/dev/null\n    1  echo a >/dev/null\n\
         s.sh: line 12: history: 9: history position out of range\n\
         s.sh: line 12: history: 1-x: history position out of range\n\
         s.sh: line 12: history: 0: history position out of range\n\
         aa ab ac\necho xx xb xc\nxx xb xc\necho 44 48 4c\n44 48 4c\n\
         s.sh: line 16: fc: no command found\ns.sh: line 17: fc: no command found\n\
         s.sh: line 18: fc: no command found\ns.sh: line 19: fc: history specification out of range\n",
        1,
    );
}

/// The later lines of a multi-line command in a script are `!`-expanded
/// too (the command read again), a here-document's body is not, and the
/// entries are bash's: the loop joined as typed, the here-document with
/// its lines and final newline. Before, `echo !!` in the loop's body ran
/// as written.
#[test]
fn history_expansion_of_a_multi_line_command() {
    script_like_bash(
        "exec 2>&1\nset -o history -H\necho one\nfor f in a b; do\n\techo !!\ndone\ncat <<EOF\nx !!\nEOF\nhistory\n",
        "one\n\techo echo one\necho one\necho one\nx !!\n    1  echo one\n\
         \x20   2  for f in a b; do \techo echo one; done\n    3  cat <<EOF\nx !!\nEOF\n\n    4  history\n",
        0,
    );
}

/// Runs `text` as a script file (`$BASH s.sh`, so each shell reads it as
/// a script, line by line) with rush and bash.
#[track_caller]
fn script_like_bash(text: &str, stdout: &str, status: i32) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.sh"), text).unwrap();
    like_bash_in(dir.path(), &[], "$BASH s.sh", stdout, status);
}

/// An expansion error in the word of a redirection that the shell performs
/// itself (a builtin's, a function's, a compound command's, an assignment
/// alone's) abandons the rest of the line, as one in an argument does; an
/// external command's redirection only fails that command. (Found by the
/// rush-against-bash generator, fuzz/tests/rush_vs_bash.rs.)
#[test]
fn an_expansion_error_in_a_redirection_abandons_the_line_as_in_bash() {
    for (script, out) in [
        (
            "a='w x'; echo <<< $((a/1)); echo same $?\necho next $?",
            "next 1\n",
        ),
        (
            "f() { :; }; f > $((1/0)); echo same $?\necho next $?",
            "next 1\n",
        ),
        (
            "{ :; } <<< $((1/0)); echo same $?\necho next $?",
            "next 1\n",
        ),
        ("x=1 > $((1/0)); echo same $?\necho next $?", "next 1\n"),
        (
            "cat <<< $((1/0)); echo same $?\necho next $?",
            "same 1\nnext 0\n",
        ),
    ] {
        like_bash(script, &[], out, 0);
    }
}

/// A subshell whose whole body is one `!` pipeline inverts the status of
/// an error that abandoned that pipeline too, but not `exit`'s or a failed
/// `exec`'s. Found by the generated programs of `fuzz/tests/rush_vs_bash.rs`
/// (seed 42).
#[test]
fn a_negated_subshell_body_inverts_an_abandoned_status() {
    for (script, out) in [
        ("( ! echo $((1/0)) ); echo $?", "0\n"),
        ("set -e; ( ! echo $((1/0)) ); echo $?", "0\n"),
        ("( ! echo ${x:?} ); echo $?", "0\n"),
        ("readonly r=1; ( ! r=2 ); echo $?", "0\n"),
        ("( ! { echo $((1/0)); } ); echo $?", "0\n"),
        ("( ! echo $((1/0)) && echo x ); echo $?", "1\n"),
        ("( true; ! echo $((1/0)) ); echo $?", "1\n"),
        ("( ! echo $((1/0)) | cat ); echo $?", "1\n"),
        ("x=$( ! echo $((1/0)) ); echo $?", "1\n"),
        ("( ! exit 3 ); echo $?", "3\n"),
        ("f() { exit 5; }; ( ! f ); echo $?", "5\n"),
        ("( ! exec /nonexistent ); echo $?", "127\n"),
    ] {
        like_bash(&format!("exec 2>/dev/null; {script}"), &[], out, 0);
    }
}

/// Found by the generated programs of `fuzz/tests/rush_vs_bash.rs`:
/// `0x` alone is 0; a variable whose value names it again through a
/// subscript (`x='y[x]'`) is an error, not a stack overflow (rush crashed
/// with SIGSEGV); a syntax error inside `$(…)` of `-c` or `eval` text ends
/// the shell (127 at the top of `-c`, 1 in a subshell), as bash does.
#[test]
fn arithmetic_and_substitution_corners_found_by_generated_programs() {
    like_bash(
        "_z=0x; echo $((_z < 13)) $((0x)) $((0X + 1))",
        &[],
        "1 0 1\n",
        0,
    );
    // A variable's value with a leading 0 is octal: `08` is an error (rush
    // read it as 8).
    like_bash(
        "exec 2>/dev/null; z=010; echo $((z)); z=08; echo $(( 1 ? z : -1 )); echo same\necho after",
        &[],
        "8\nafter\n",
        0,
    );
    like_bash(
        "exec 2>/dev/null; x='y[x]'; ( echo $(( x )) ); echo $?; x='x=y[x]'; ( : $(( x )) ); echo $?",
        &[],
        "1\n1\n",
        0,
    );
    like_bash("exec 2>/dev/null; echo $(if); echo after", &[], "", 127);
    like_bash(
        "exec 2>/dev/null; eval 'echo $(if)'; echo after",
        &[],
        "",
        127,
    );
    like_bash(
        "exec 2>/dev/null; ( eval 'echo $(if)' ); echo $?; eval 'echo )'; echo $?",
        &[],
        "1\n2\n",
        0,
    );
    // `${#a[i]}` of an unset `a` is 0, its index not evaluated.
    like_bash(
        "x='*'; echo ${#a[x]} ${#a[1]}; echo same",
        &[],
        "0 0\nsame\n",
        0,
    );
    // An error in an array index throws away the rest of the text: all
    // of `-c` (status 1); in a subshell, the subshell.
    like_bash(
        "exec 2>/dev/null; x='*'; ( echo ${a[x]}; echo in ); echo $?\n(( a[x] )); echo same\necho after",
        &[],
        "1\n",
        1,
    );
    like_bash(
        "exec 2>/dev/null; x='*'; eval 'a[x]=1; echo same'\necho after",
        &[],
        "",
        1,
    );
}

/// `declare -f` prints backquotes and here-document bodies as they were
/// written, as bash does (rush printed `$(…)` for both, normalised).
/// Found by the fuzz smoke's rush-unparse inputs.
#[test]
fn declare_f_keeps_backquotes_and_here_document_bodies_as_written() {
    like_bash(
        "f() { echo `date  +%s` \"`echo \\\"q\\\"`\" ${x:-`b`}; cat <<E\n`echo  hi`  $(  echo a ) ${y}\nE\n}\ndeclare -f f",
        &[],
        "f () \n{ \n    echo `date  +%s` \"`echo \\\"q\\\"`\" ${x:-`b`};\n    cat <<E\n`echo  hi`  $(  echo a ) ${y}\nE\n\n}\n",
        0,
    );
}

/// Double quotes inside arithmetic are kept as written: `declare -f`
/// prints them (rush dropped them, so `$((1")"+2))` read back as a
/// different command), and `for ((…))` does not split at a quoted `;`.
/// Found by libFuzzer's rush-unparse run (a mutated completion script).
#[test]
fn double_quotes_in_arithmetic_stay_as_written() {
    like_bash(
        "f() { R=$((1\")\"+2)); for ((\"i=0\";i<2;i++)); do :; done; }; declare -f f",
        &[],
        "f () \n{ \n    R=$((1\")\"+2));\n    for ((\"i=0\"; i<2; i++))\n    do\n        :;\n    done\n}\n",
        0,
    );
    // Backslashes outside double quotes too: `(( \\ ))` printed as
    // `(( \ ))`, `$(( \$x ))` as `$(( $x ))`.
    like_bash(
        "f() { echo $(( a[\\\\] )) $(( \\$x )) $(( a[$x]+\\\\ )); (( \\\\\\\\ )); }; declare -f f",
        &[],
        "f () \n{ \n    echo $(( a[\\\\] )) $(( \\$x )) $(( a[$x]+\\\\ ));\n    (( \\\\\\\\ ))\n}\n",
        0,
    );
    // Their escapes too: `"\\"` printed as `"\"` did not read back.
    like_bash(
        "f() { echo $(( \"\\\\\" )) $(( \"a\\$b\" )) $((\"\\\"\")) $((\"`echo 1`\")); }; declare -f f",
        &[],
        "f () \n{ \n    echo $(( \"\\\\\" )) $(( \"a\\$b\" )) $((\"\\\"\")) $((\"`echo 1`\"))\n}\n",
        0,
    );
    like_bash(
        "a=(5 6); x=1; echo $((1\"2\"+2)) $((\"a[x]\")) $(( \"$x\" + 1 )) $[ \"3\"+1 ]",
        &[],
        "14 6 2 4\n",
        0,
    );
    like_bash(
        "for ((i=0\";\"i<2;i++)); do echo $i; done 2>/dev/null; echo $?",
        &[],
        "",
        2,
    );
}

/// Brace expansion makes every word bash makes (rush stopped at 1,048,576
/// words without a word of warning), and a word that would make more than
/// rush's limit (4,194,304 words) is an error, not a truncated list or
/// gigabytes of memory. Found by libFuzzer's rush-brace run.
#[test]
fn brace_expansion_is_whole_or_an_error() {
    like_bash("echo {1..1100000} | wc -w", &[], "1100000\n", 0);
    let out = rush()
        .args(["-c", "echo x{1..99999999999}; echo not here"])
        .output()
        .expect("rush runs");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("brace expansion: more than 4194304 words"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A pipeline with here-documents followed by `||` or `&&`: bash prints the
/// bodies before the operator, so a line starts with `||` and its own
/// `declare -f` does not read back; rush prints them after it (as bash
/// does for a single command). Found by libFuzzer's rush-unparse run.
#[test]
fn declare_f_prints_a_pipelines_here_documents_after_the_operator() {
    let r = dash_c(
        "f() { cat <<E | cat <<F || echo x\ne\nE\nf\nF\n}\n\
         eval \"$(declare -f f)\" && declare -f f && f",
        &[],
    );
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "f () \n{ \n    cat <<E |\ne\nE\n  cat <<F || \nf\nF\n echo x\n}\nf\n"
    );
}

/// A line continuation inside or right after a reserved word leaves the
/// word reserved (`f\⏎i`, `fi\⏎`), as bash reads it: rush took `fi\` for a
/// command name, so `if …; fi\⏎` at the end of a script was "unexpected
/// end of file", and `declare -f` printed a `fi` that did not read back.
/// Found by libFuzzer's rush-unparse run.
#[test]
fn a_continued_reserved_word_is_reserved() {
    like_bash("if true; then echo a; fi\\\n", &[], "a\n", 0);
    like_bash("if true; then echo a; f\\\ni\necho b", &[], "a\nb\n", 0);
    like_bash("while false; do :; don\\\ne; echo c", &[], "c\n", 0);
    like_bash("echo x; fi\\\n", &[], "", 2);
    let r = dash_c("eval 'fi\\\n'", &[]);
    assert_eq!(r.status, 2);
    assert!(
        r.stderr.contains("syntax error near unexpected token `fi'"),
        "{}",
        r.stderr
    );
}

/// An and-or list with here-documents run in the background: bash prints
/// the bodies before the `&`, so a line starts with `&`; rush prints them
/// after it, as bash does for a single command. Found by libFuzzer's
/// rush-unparse run.
#[test]
fn declare_f_prints_a_background_lists_here_documents_after_the_ampersand() {
    let r = dash_c(
        "f() { false || cat <<E & wait; echo x\nbody\nE\n}\n\
         eval \"$(declare -f f)\" && declare -f f && f",
        &[],
    );
    assert_eq!(r.status, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "f () \n{ \n    false || cat <<E &\nbody\nE\n  wait\n    echo x\n}\nbody\nx\n"
    );
    // A lone job: rush printed the body before the `&`; bash after it.
    like_bash(
        "g() { <<X &\nX\n}\ndeclare -f g",
        &[],
        "g () \n{ \n    <<X &\nX\n \n}\n",
        0,
    );
}

/// `${x/p}` without the replacement's `/`: `declare -f` prints it as
/// written (rush added the `/`, so `${w/}` came out as `${w//}`, which
/// reads back as the replace-all operator, and `${w//}` as `${w///}`,
/// whose pattern is `/`). Found by libFuzzer's rush-unparse run.
#[test]
fn declare_f_keeps_a_replacement_without_its_slash() {
    like_bash(
        "f() { echo ${w/} ${w//} ${w/a} ${w//a} ${w/a/} ${w/#} \"${w/}\" ${w////c}; }; declare -f f",
        &[],
        "f () \n{ \n    echo ${w/} ${w//} ${w/a} ${w//a} ${w/a/} ${w/#} \"${w/}\" ${w////c}\n}\n",
        0,
    );
    like_bash(
        "w=a/b/c; echo ${w/} ${w//} ${w/b} ${w//\\/} ${w////-}",
        &[],
        "a/b/c a/b/c a//c abc a-b-c\n",
        0,
    );
}

/// `$'…'` inside `"${x=…}"` is printed by `declare -f` as its decoded text
/// in the escapes of a word in `"${…}"` (rush printed it single-quoted,
/// which there means the quotes themselves; bash prints it bare, so a `}`
/// or `"` in it does not read back), and a bad substitution is printed as
/// written (its message's text has `$'…'` decoded, which in double quotes
/// did not read back). Found by libFuzzer's rush-unparse run.
#[test]
fn declare_f_prints_ansi_c_quotes_in_double_quoted_operators_so_they_read_back() {
    let body = "f() { echo \"${C=$'\\a'}\" \"${D=$'\\q'}\" \"${E=$'x'}\" \"${G=$'a}b\"c$'}\" \"${H=$'\\\\'}\"; }";
    let direct = dash_c(&format!("{body}; f"), &[]);
    let again = dash_c(
        &format!("{body}; eval \"$(declare -f f)\"; unset C D E G H; f"),
        &[],
    );
    assert_eq!(direct.status, 0, "{}", direct.stderr);
    assert_eq!(direct.stdout, "\u{7} \\q x a}b\"c$ \\\n");
    assert_eq!(again.stdout, direct.stdout, "{}", again.stderr);
    let r = dash_c("f() { echo \"${=$'\"'}e\"; }; declare -f f", &[]);
    assert_eq!(r.stdout, "f () \n{ \n    echo \"${=$'\"'}e\"\n}\n");
}

/// A command substitution whose body starts with a subshell is printed
/// `$( (…))`, as bash prints it: rush printed `$((…))`, which reads back as
/// arithmetic. Found by libFuzzer's rush-unparse run.
#[test]
fn declare_f_keeps_a_subshell_in_a_command_substitution_apart_from_arithmetic() {
    like_bash(
        "f() { x=$( (echo a) ); y=$( ( { echo b; } ) ); w=$((1+2)); }; declare -f f; eval \"$(declare -f f)\"; f; echo $x $y $w",
        &[],
        "f () \n{ \n    x=$( ( echo a ));\n    y=$( ( { echo b; } ));\n    w=$((1+2))\n}\na b 3\n",
        0,
    );
}

/// A backslash that escapes nothing in double quotes is printed bare, as
/// read: rush printed `"${C=\'''}"` as `"${C=\\'''}"`, where the quote after
/// `\\` is one to match, so the text did not read back. Found by
/// libFuzzer's rush-unparse run.
#[test]
fn declare_f_keeps_a_backslash_that_escapes_nothing_in_double_quotes() {
    like_bash(
        "f() { echo \"${C=\\'''}\" \"a\\qb\" \"\\\\\\$\"; }; declare -f f; f",
        &[],
        "f () \n{ \n    echo \"${C=\\'''}\" \"a\\qb\" \"\\\\\\$\"\n}\n\\''' a\\qb \\$\n",
        0,
    );
}

/// A quoted loop name (`for i" " do`) is not a name: the loop fails when it
/// runs, naming the word as written, and `declare -f` prints it so (rush
/// took it as `i ` and printed `for i  in`, which reads back as `i`).
/// Found by libFuzzer's rush-unparse run.
#[test]
fn a_quoted_loop_name_stays_as_written() {
    like_bash(
        "for i\" \" do echo x; done 2>/dev/null; echo $?; f() { for i\" \" do :; done; }; declare -f f",
        &[],
        "1\nf () \n{ \n    for i\" \" in \"$@\";\n    do\n        :;\n    done\n}\n",
        0,
    );
}

/// Inside double quotes, a backslash before the single quote that closes
/// the quoted text of `${x=…}` does not quote it (`"${C='\'}"` is `'\'`):
/// rush read on to the end of the script. Found by the smoke run of
/// rush-unparse in CI.
#[test]
fn a_backslash_does_not_quote_the_closing_single_quote_in_a_double_quoted_operator() {
    like_bash(
        "echo \"${C='\\'}\" \"${D='\\'}'}\" \"${E='\\$'}\"; f() { echo \"${C='\\'}\"x; }; declare -f f",
        &[],
        "'\\' '\\''} '$'\nf () \n{ \n    echo \"${C='\\'}\"x\n}\n",
        0,
    );
}

/// In double quotes, the single quotes of a pattern or a replacement quote
/// (`"${x#'*'}"` removes a `*`): `declare -f` keeps them, as bash (rush
/// printed `"${x#*}"`, which removes everything). A `$'…'` value holding a
/// quote is printed `$'…'`: bash prints it decoded (`"${u-a'b}"`), which
/// does not read back. Found by a longer smoke run of rush-unparse.
#[test]
fn declare_f_keeps_single_quotes_in_double_quoted_patterns() {
    let body = "f() { echo \"${x#'*'}\" \"${x/'*'/'y'}\" \"${x^^'a'}\" \"${u-$'a\\'b'}\"; }";
    let r = dash_c(&format!("{body}; declare -f f"), &[]);
    assert_eq!(
        r.stdout,
        "f () \n{ \n    echo \"${x#'*'}\" \"${x/'*'/'y'}\" \"${x^^'a'}\" \"${u-$'a\\'b'}\"\n}\n"
    );
    let direct = dash_c(&format!("x=\"*a'\"; {body}; f"), &[]);
    let again = dash_c(
        &format!("x=\"*a'\"; {body}; eval \"$(declare -f f)\"; f"),
        &[],
    );
    assert_eq!(direct.stdout, "a' ya' *A' a'b\n", "{}", direct.stderr);
    assert_eq!(again.stdout, direct.stdout, "{}", again.stderr);
}

/// A line continuation after `$`, in a `${…}`'s name or operator, or
/// between `$(` and `(` is no part of the word: `$\<newline>"x"` is `$"x"`
/// and `${HO\<newline>ME}` is `${HOME}` (rush read `$` alone, or a bad
/// substitution). Found by a longer smoke run of rush-unparse, where
/// `$\<newline>"…"` printed as `$"…"` read back otherwise. (bash prints
/// the `$` in `$"$"` bare, as written; rush escapes it, the same text.)
#[test]
fn a_line_continuation_after_a_dollar_joins_the_expansion() {
    like_bash(
        "x=X\necho $\\\n\"a\" $\\\nx $\\\n{x} ${\\\nx} ${#\\\nx} ${u\\\n:\\\n-d} $\\\n(\\\n(1+2)) \"$\\\nx\" \"$\\\n\"\necho $LINENO",
        &[],
        "a X X X 1 d 3 X $\n14\n",
        0,
    );
    let r = dash_c("f() { \"\"$\\\n\"$\\\n\"$\\\n$\\\n\n}; declare -f f", &[]);
    assert_eq!(
        r.stdout, "f () \n{ \n    \"\"\"\\$\"$$\n}\n",
        "{}",
        r.stderr
    );
}

/// The `2>&1` of `|&` after a command named by a reserved word goes after
/// the redirections printed first (`>&2 } don |& cat` was printed
/// `1>&2 } don 2>&1 | cat`, which reads back with both redirections first
/// and printed otherwise). Found by a longer smoke run of rush-unparse.
#[test]
fn declare_f_puts_the_stderr_of_a_pipe_after_leading_redirections() {
    let r = dash_c(
        "f() { >&2 } don |& cat; 1>&2 } x 2>&1 | cat; >&2 echo a |& cat |& cat; }; declare -f f",
        &[],
    );
    assert_eq!(
        r.stdout,
        "f () \n{ \n    1>&2 2>&1 } don | cat;\n    1>&2 2>&1 } x | cat;\n    echo a 1>&2 2>&1 | cat 2>&1 | cat\n}\n",
        "{}",
        r.stderr
    );
}

/// A process substitution goes on with the word before it: `do<(echo)` is
/// the command `do/dev/fd/63`, not the reserved word (rush refused it; and
/// `declare -f` printed `</dev/null do<(…)` as `do<(…) < /dev/null`, which
/// then did not read back). Found by a longer smoke run of rush-unparse.
#[test]
fn a_reserved_word_followed_by_a_process_substitution_is_a_word() {
    like_bash(
        "do<(:) 2>/dev/null; echo $?; f() { </dev/null do<(echo in); }; declare -f f",
        &[],
        "127\nf () \n{ \n    do<(echo in) < /dev/null\n}\n",
        0,
    );
}

/// The `2>&1` of `|&` is a redirection, as bash keeps it: after a job's
/// here-document bodies, the next command printed with it takes its `;`
/// (rush left it out, and the text printed again had it). Found by
/// libFuzzer's rush-unparse run.
#[test]
fn declare_f_puts_a_semicolon_after_a_pipe_of_stderr_that_follows_bodies() {
    like_bash(
        "f() {\n<<E & x |&\nE\n2\ny\n}\ndeclare -f f",
        &[],
        "f () \n{ \n    <<E &\nE\n  x 2>&1 | 2;\n    y\n}\n",
        0,
    );
}

/// Double quotes inside a double-quoted `${x=…}` (or a replacement) read a
/// backslash before any character as an escape (`"${C="\q"}"` is `q`), so
/// `declare -f` escapes every backslash there: rush printed `\\A` as `\A`,
/// which reads back as `A`. Found by a longer smoke run of rush-unparse.
#[test]
fn declare_f_escapes_backslashes_in_double_quotes_inside_a_double_quoted_value() {
    let body = "f() { echo \"${C=\"a\\\\q\\'\"}\" \"${D/x/\"\\\\y\"}\" \"${E#\"\\\\\"}\"; }";
    let direct = dash_c(&format!("D=x E='\\z'; {body}; f"), &[]);
    let again = dash_c(
        &format!("D=x E='\\z'; {body}; eval \"$(declare -f f)\"; f"),
        &[],
    );
    assert_eq!(direct.stdout, "a\\q' \\y z\n", "{}", direct.stderr);
    assert_eq!(again.stdout, direct.stdout, "{}", again.stderr);
}

/// A `$'…'` printed decoded after `$x` in a double-quoted value needs the
/// braces (`${x}Y`; bash prints `$xY`, which reads back as `$xY`), and a
/// special parameter before a name character needs none (`$$L`; rush
/// printed `${$}L` when the text after it was read back as a word).
/// Found by a longer smoke run of rush-unparse.
#[test]
fn declare_f_braces_a_name_before_decoded_text_and_no_special_parameter() {
    let body = "f() { echo \"${C=$$$'L'}\" \"${D=$x$'Y'}\" \"$$\"L; }";
    let r = dash_c(&format!("{body}; declare -f f"), &[]);
    assert_eq!(
        r.stdout, "f () \n{ \n    echo \"${C=$$L}\" \"${D=${x}Y}\" \"$$\"L\n}\n",
        "{}",
        r.stderr
    );
    let r = dash_c(&format!("x=X; {body}; f; eval \"$(declare -f f)\"; f"), &[]);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", r.stderr);
    assert!(lines[0].contains(" XY "), "{}", r.stdout);
    assert_eq!(lines[0], lines[1]);
}

/// A subscript with no `]` before the end of the input: the `${…}` ends at
/// its `}` and is a bad substitution when it runs (`${d[}`), as in bash;
/// rush read on to the end and refused the script (or, finding a backquote
/// it could not parse on the way, refused that). Found by libFuzzer's
/// rush-unparse run.
#[test]
fn a_subscript_never_closed_is_a_bad_substitution_when_it_runs() {
    like_bash(
        "f() {\necho ${d[}\necho after\n}\ndeclare -f f\necho ${d[} x\necho $?\ng() { :; } <<E\n`>`\nE\necho end",
        &[],
        "f () \n{ \n    echo ${d[};\n    echo after\n}\n1\nend\n",
        0,
    );
}

/// `time`'s `-p` and `--` with line continuations in or after them are the
/// options still (`time -p\<newline>` times nothing in POSIX's format):
/// rush took `-p` as the command. Found by a longer smoke run of
/// rush-unparse, where `time -p` printed `time -p ` the second time.
#[test]
fn times_options_with_line_continuations_are_options() {
    like_bash(
        "f() { time -\\\np\\\n -\\\n- echo a\n}; declare -f f; g() { time -p\\\n\n}; declare -f g",
        &[],
        "f () \n{ \n    time -p echo a\n}\ng () \n{ \n    time -p \n}\n",
        0,
    );
}

/// A bad substitution whose name was written `$'…'` in double quotes is
/// printed by `declare -f` as written: rush printed it with the `$'…'`
/// decoded (`"${$'$''}"'}"` as `"${$'}"'}"`, as bash does), which reads
/// back otherwise. Found by longer smoke runs of rush-unparse.
#[test]
fn declare_f_prints_a_bad_substitution_with_an_ansi_c_name_as_written() {
    let r = dash_c("f() { echo \"${$'$''}\"'}\" x; }; declare -f f", &[]);
    assert_eq!(
        r.stdout, "f () \n{ \n    echo \"${$'$''}\"'}\" x\n}\n",
        "{}",
        r.stderr
    );
}

/// `declare -f` prints `<>` with its descriptor, `0<> f`, as bash does
/// (rush printed `<> f`). Found by a longer smoke run of rush-unparse.
#[test]
fn declare_f_names_the_descriptor_of_read_write() {
    like_bash(
        "f() { <>a cat; 3<>b cat; cat <> c; }; declare -f f",
        &[],
        "f () \n{ \n    cat 0<> a;\n    cat 3<> b;\n    cat 0<> c\n}\n",
        0,
    );
}

/// `in` with a line continuation in or after it is still the reserved word
/// where a command starts (an error there, as in bash; rush ran the
/// command `in`), and after `for name` and `case word`. Found by a longer
/// smoke run of rush-unparse.
#[test]
fn in_with_a_line_continuation_is_the_reserved_word() {
    like_bash(
        "for i i\\\nn a b; do echo $i; done; case a i\\\nn a) echo y;; esac",
        &[],
        "a\nb\ny\n",
        0,
    );
    let r = dash_c("echo a\nin\\\n\necho b", &[]);
    assert_eq!(r.status, 2);
    assert_eq!(r.stdout, "a\n");
    assert!(
        r.stderr
            .contains("line 3: syntax error near unexpected token `in'"),
        "{}",
        r.stderr
    );
}

/// `coproc NAME` is taken only before a compound command: a word that
/// starts with `{` is not one (`coproc x {a,b}` runs `x {a,b}` as COPROC,
/// as bash; rush took `x` as the name). Found by a longer smoke run of
/// rush-unparse.
#[test]
fn coproc_takes_a_name_only_before_a_brace_group_not_a_brace_word() {
    like_bash(
        "f() { coproc exec {fd}>&- cat; coproc x {a,b}; coproc y { cat; }; }; declare -f f",
        &[],
        "f () \n{ \n    coproc COPROC exec cat {fd}>&-;\n    coproc COPROC x {a,b};\n    coproc y { \n        cat\n    }\n}\n",
        0,
    );
}
