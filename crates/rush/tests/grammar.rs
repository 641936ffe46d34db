//! The shell grammar: lists, pipelines, compound commands, functions,
//! comments, line continuation and aliases.

mod common;
use common::{check, table};

#[test]
fn lists_and_and_or() {
    table(&[
        ("echo a; echo b\n", "a\nb\n"),
        ("true && echo yes || echo no\n", "yes\n"),
        ("false && echo yes || echo no\n", "no\n"),
        ("false || false || echo C && echo D\n", "C\nD\n"),
        ("! false && echo negated\n", "negated\n"),
        ("! true; echo $?\n", "1\n"),
        ("echo a &&\necho b\n", "a\nb\n"),
    ]);
}

#[test]
fn pipelines_stream_and_report_the_last_status() {
    table(&[
        ("printf 'b\\na\\n' | sort | head -1\n", "a\n"),
        ("false | true; echo $?\n", "0\n"),
        ("true | false; echo $?\n", "1\n"),
        ("set -o pipefail; false | true; echo $?\n", "1\n"),
        ("echo x | { read v; echo got $v; }\n", "got x\n"),
        ("ls /nonexistent-rush 2>&1 >/dev/null | wc -l\n", "1\n"),
        ("echo hi | read x; echo \"[$x]\"\n", "[]\n"),
        (
            "shopt -s lastpipe; i=0; seq 3 | while read l; do i=$((i+1)); done; echo $i\n",
            "3\n",
        ),
        (
            "shopt -s lastpipe; false | true | (exit 4); echo ${PIPESTATUS[@]}\n",
            "1 0 4\n",
        ),
    ]);
}

#[test]
fn compound_commands() {
    table(&[
        (
            "if false; then echo 1; elif true; then echo 2; else echo 3; fi\n",
            "2\n",
        ),
        (
            "i=0; while [ $i -lt 3 ]; do i=$((i+1)); done; echo $i\n",
            "3\n",
        ),
        (
            "i=0; until [ $i -ge 2 ]; do i=$((i+1)); done; echo $i\n",
            "2\n",
        ),
        ("for x in a b c; do printf %s $x; done; echo\n", "abc\n"),
        ("set -- p q; for x; do printf %s $x; done; echo\n", "pq\n"),
        (
            "for x in 1 2 3; do [ $x = 2 ] && continue; echo $x; done\n",
            "1\n3\n",
        ),
        (
            "for x in 1 2 3; do for y in a b; do [ $y = b ] && break 2; echo $x$y; done; done\n",
            "1a\n",
        ),
        ("(x=inner; echo $x); echo ${x-unset}\n", "inner\nunset\n"),
        ("{ echo a; echo b; } | wc -l\n", "2\n"),
        ("case abc in a*c) echo glob;; *) echo no;; esac\n", "glob\n"),
        ("case x in (a|x) echo alt;; esac\n", "alt\n"),
        ("case '*' in \\*) echo star;; esac\n", "star\n"),
        (
            "case a in a) echo one;& b) echo two;; c) echo three;; esac\n",
            "one\ntwo\n",
        ),
        ("x=5; (( x > 3 )) && echo big\n", "big\n"),
        ("[[ abc == a* && -n x ]] && echo dbl\n", "dbl\n"),
        ("[[ foo =~ ^f(o+)$ ]] && echo re\n", "re\n"),
    ]);
}

#[test]
fn multi_line_constructs_on_stdin() {
    let script = "if true\nthen\n  echo yes\nfi\nf() {\n  echo \"in f: $1\"\n}\nf arg\ncase q in\n  q)\n    echo q\n    ;;\nesac\n";
    check(script, "yes\nin f: arg\nq\n", 0);
}

#[test]
fn functions_locals_and_return() {
    table(&[
        ("f() { return 3; }; f; echo $?\n", "3\n"),
        ("x=g; f() { local x=l; echo $x; }; f; echo $x\n", "l\ng\n"),
        ("f() { echo $# \"$@\"; }; f a 'b c'\n", "2 a b c\n"),
        ("function g { echo kw; }; g\n", "kw\n"),
        ("f() { echo $1; shift; echo $1; }; f 1 2\n", "1\n2\n"),
        ("f() ( echo sub $1 ); f s\n", "sub s\n"),
        ("f() { echo out; } >/dev/null; f; echo after\n", "after\n"),
        (
            "outer() { inner; }; inner() { echo $v; }; v=dyn; outer\n",
            "dyn\n",
        ),
    ]);
}

#[test]
fn comments_and_line_continuation() {
    table(&[
        ("echo a # comment\n# whole line\necho b\n", "a\nb\n"),
        ("echo a#b\n", "a#b\n"),
        ("echo one \\\ntwo\n", "one two\n"),
        ("ec\\\nho joined\n", "joined\n"),
    ]);
}

#[test]
fn aliases_expand_in_command_position_from_the_next_line() {
    table(&[
        (
            "shopt -s expand_aliases\nalias say='echo said'\nsay hi\n",
            "said hi\n",
        ),
        (
            "shopt -s expand_aliases\nalias a='echo x' b='a '\nb a\n",
            "x echo x\n",
        ),
        // A script's aliases are not expanded until it asks (bash), but
        // they are in POSIX mode.
        (
            "alias say='echo said'\nsay hi 2>/dev/null || echo none\n",
            "none\n",
        ),
        ("set -o posix\nalias say='echo said'\nsay hi\n", "said hi\n"),
        ("alias ls=ls\nalias ls\n", "alias ls='ls'\n"),
        ("alias -- a=b\nalias a\n", "alias a='b'\n"),
        (
            "alias e=echo; unalias e; type e >/dev/null 2>&1 || echo gone\n",
            "gone\n",
        ),
    ]);
}

#[test]
fn syntax_errors_exit_2_with_the_line() {
    let r = common::stdin("echo ok\nif then fi\n");
    assert_eq!(r.stdout, "ok\n");
    assert_eq!(r.status, 2);
    assert!(
        r.stderr.contains(": line 2:") && r.stderr.contains("syntax error"),
        "{}",
        r.stderr
    );
    let r = common::stdin("echo 'unterminated\n");
    assert_eq!(r.status, 2);
    assert!(r.stderr.contains("unexpected EOF"), "{}", r.stderr);
}
