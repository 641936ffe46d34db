//! Word expansion: quoting, tilde, parameters, command substitution,
//! arithmetic, field splitting and globbing.

mod common;
use common::{check, stdin_in, table};

#[test]
fn quoting() {
    table(&[
        ("echo 'a  $b' \"c  $((1+1))\" d\\ e\n", "a  $b c  2 d e\n"),
        ("echo \"a\\\"b\\$c\\\\\"\n", "a\"b$c\\\n"),
        (
            "echo $'tab\\there' $'\\x41\\101\\u00e9'\n",
            "tab\there AAé\n",
        ),
        ("x='*'; echo \"$x\"\n", "*\n"),
        ("echo ''\"\" | wc -c\n", "1\n"),
    ]);
}

#[test]
fn tilde() {
    table(&[
        ("HOME=/h; echo ~ ~/x \"~\" a~\n", "/h /h/x ~ a~\n"),
        ("HOME=/h; x=~/a:~/b; echo $x\n", "/h/a:/h/b\n"),
        ("echo ~root\n", "/root\n"),
        (
            "HOME=/h; unset u; echo ${u:-~} ${u:-~/z} \"${u:-~}\"\n",
            "/h /h/z ~\n",
        ),
    ]);
}

#[test]
fn parameter_expansion_posix_forms() {
    table(&[
        ("unset x; echo ${x:-d} ${x-d2} \"${x:+alt}\"\n", "d d2 \n"),
        (
            "x=; echo \"${x:-d}\" \"${x-d}\" \"${x:+a}\" \"${x+b}\"\n",
            "d   b\n",
        ),
        ("unset x; echo ${x:=set}; echo $x\n", "set\nset\n"),
        ("x=hello; echo ${#x}\n", "5\n"),
        (
            "x=a.b.c; echo ${x%.*} ${x%%.*} ${x#*.} ${x##*.}\n",
            "a.b a b.c c\n",
        ),
        (
            "x=path/to/file.txt; echo ${x##*/} ${x%/*}\n",
            "file.txt path/to\n",
        ),
        ("x=aaa; echo ${x/a/b} ${x//a/b}\n", "baa bbb\n"),
        ("x=abcdef; echo ${x:1:3} ${x: -2}\n", "bcd ef\n"),
        ("x=Hello; echo ${x^^} ${x,,}\n", "HELLO hello\n"),
        (
            "x=abc; echo \"${x#?}\" \"${x%?}\" \"[${x##*}]\" \"${x#\"?\"}\"\n",
            "bc ab [] abc\n",
        ),
        ("x=μabcμ; echo ${x#?} ${x%?} ${#x}\n", "abcμ μabc 5\n"),
        ("x=v; r=x; echo ${!r}\n", "v\n"),
        (
            "x=\"it's\"; echo ${x@Q} ${x@U} ${x@A}\n",
            "'it'\\''s' IT'S x='it'\\''s'\n",
        ),
        (
            "pfx_a=1 pfx_b=2; echo ${!pfx_*}; for n in \"${!pfx_@}\"; do echo $n; done\n",
            "pfx_a pfx_b\npfx_a\npfx_b\n",
        ),
    ]);
}

#[test]
fn error_and_unset_parameters() {
    let r = common::stdin("unset x; echo ${x:?custom message}; echo after\n");
    assert_ne!(r.status, 0);
    assert_eq!(r.stdout, "");
    assert!(r.stderr.contains("x: custom message"), "{}", r.stderr);
    let r = common::stdin("set -u; echo $nope; echo after\n");
    assert_ne!(r.status, 0);
    assert!(r.stderr.contains("nope: unbound variable"), "{}", r.stderr);
}

#[test]
fn special_parameters() {
    let r = common::dash_c("echo $0 $# $1 \"$@\" \"$*\"", &["name", "a", "b c"]);
    assert_eq!(r.stdout, "name 2 a a b c a b c\n");
    table(&[
        ("false; echo $?\n", "1\n"),
        ("set -- 1 2 3; shift; echo $# $*\n", "2 2 3\n"),
        ("set -e; case $- in *e*) echo has-e;; esac\n", "has-e\n"),
        ("sleep 0 & wait $!; echo $?\n", "0\n"),
        ("[ $$ -gt 0 ] && echo pid\n", "pid\n"),
        ("set -- a b; IFS=:; echo \"$*\"\n", "a:b\n"),
    ]);
}

#[test]
fn command_substitution_nests_and_trims_newlines() {
    table(&[
        ("echo $(echo $(echo nested))\n", "nested\n"),
        ("echo `echo back\\`echo tick\\``\n", "backtick\n"),
        ("x=$(printf 'a\\n\\n\\n'); echo \"[$x]\"\n", "[a]\n"),
        ("x=$(pwd); [ \"$x\" = \"$PWD\" ] && echo same\n", "same\n"),
        ("x=$(exit 3); echo $?\n", "3\n"),
        ("echo $(case a in a) echo in-case;; esac)\n", "in-case\n"),
        (
            "x=$(cat <<EOF\nheredoc in sub\nEOF\n); echo $x\n",
            "heredoc in sub\n",
        ),
    ]);
}

#[test]
fn arithmetic_with_the_c_operators() {
    table(&[
        (
            "echo $((1 + 2 * 3)) $((7 / 2)) $((7 % 3)) $((2 ** 10))\n",
            "7 3 1 1024\n",
        ),
        (
            "echo $((1 << 3)) $((0xff & 0x0f)) $((5 ^ 1)) $((~0))\n",
            "8 15 4 -1\n",
        ),
        (
            "echo $((3 > 2 && 1 == 1)) $((!1)) $((1 ? 10 : 20))\n",
            "1 0 10\n",
        ),
        ("x=5; echo $((x += 2)) $((x++)) $x $((--x))\n", "7 7 8 7\n"),
        ("a=3 b=4; echo $(( (a + b) * 2 ))\n", "14\n"),
        ("echo $((010 + 2#11 + 16#f))\n", "26\n"),
    ]);
    let r = common::stdin("echo $((1 / 0)); echo after\n");
    assert_ne!(r.status, 0);
    assert!(r.stderr.contains("division by 0"), "{}", r.stderr);
}

#[test]
fn field_splitting_by_ifs() {
    table(&[
        ("x='a  b   c'; set -- $x; echo $#\n", "3\n"),
        ("x='a:b::c'; IFS=:; set -- $x; echo $#\n", "4\n"),
        ("x=' a b '; set -- \"$x\"; echo $#\n", "1\n"),
        ("x=''; set -- $x; echo $#\n", "0\n"),
        (
            "set -- 'a b' c; for i in \"$@\"; do echo \"[$i]\"; done\n",
            "[a b]\n[c]\n",
        ),
        ("IFS=; x='a b'; set -- $x; echo $#\n", "1\n"),
    ]);
}

#[test]
fn pathname_expansion() {
    let d = tempfile::tempdir().unwrap();
    for f in ["a.txt", "b.txt", "c.md", ".hidden.txt"] {
        std::fs::write(d.path().join(f), "").unwrap();
    }
    std::fs::create_dir(d.path().join("sub")).unwrap();
    std::fs::write(d.path().join("sub/x.txt"), "").unwrap();
    let cases = [
        ("echo *.txt\n", "a.txt b.txt\n"),
        ("echo ?.md\n", "c.md\n"),
        ("echo [ab].txt\n", "a.txt b.txt\n"),
        ("echo [![:alpha:]]* none*\n", "[![:alpha:]]* none*\n"),
        ("echo */*.txt\n", "sub/x.txt\n"),
        ("echo .*.txt\n", ".hidden.txt\n"),
        ("echo '*'.txt \\*\n", "*.txt *\n"),
        ("set -f; echo *.txt\n", "*.txt\n"),
        ("echo */\n", "sub/\n"),
    ];
    for (script, out) in cases {
        let r = stdin_in(script, Some(d.path()));
        assert_eq!(r.stdout, out, "{script}");
    }
}

#[test]
fn arrays() {
    table(&[
        (
            "a=(1 'two words' 3); echo ${#a[@]} \"${a[1]}\"\n",
            "3 two words\n",
        ),
        ("a=(x y); a+=(z); echo ${a[@]} ${!a[@]}\n", "x y z 0 1 2\n"),
        ("a=(1 2 3); i=1; echo $((a[i] + a[2]))\n", "5\n"),
        (
            "declare -A m; m[k]=v; m[j]=w; echo ${m[k]} ${#m[@]}\n",
            "v 2\n",
        ),
        ("a=(p q r); unset 'a[1]'; echo ${a[@]}\n", "p r\n"),
        ("a=(a b c); echo \"${a[*]}\" \"${a[@]:1}\"\n", "a b c b c\n"),
    ]);
    check("f() { local -a l=(1 2); echo ${l[1]}; }; f\n", "2\n", 0);
}

#[test]
fn bash_dynamic_variables() {
    table(&[
        ("echo \"hi there\"; echo \"$_\"\n", "hi there\nhi there\n"),
        (": a b; echo $_\n", "b\n"),
        (
            "[ \"$UID\" = \"$(id -u)\" ] && [ -n \"$EUID\" ] && echo ids\n",
            "ids\n",
        ),
        (
            "[ \"$HOSTNAME\" = \"$(hostname)\" ] && echo host\n",
            "host\n",
        ),
        ("echo $OSTYPE $SECONDS\n", "linux-gnu 0\n"),
        (
            "a=$RANDOM b=$RANDOM c=$RANDOM; [ \"$a$b\" != \"$b$c\" ] && [ $a -lt 32768 ] && echo varies\n",
            "varies\n",
        ),
        (
            "[ $BASHPID = $$ ] && (sh -c 'exit 0'; [ $BASHPID != $$ ] && echo sub)\n",
            "sub\n",
        ),
    ]);
}

#[test]
fn brace_expansion() {
    table(&[
        ("echo a{b,c}d {1..3} x{,.bak}\n", "abd acd 1 2 3 x x.bak\n"),
        (
            "echo {a..c}{1,2} {05..07}\n",
            "a1 a2 b1 b2 c1 c2 05 06 07\n",
        ),
        (
            "x=1; echo {$x,y} '{a,b}' \\{a,b\\} {a}\n",
            "1 y {a,b} {a,b} {a}\n",
        ),
        ("v={a,b}; echo $v\n", "{a,b}\n"),
        ("set +B; echo {a,b}\n", "{a,b}\n"),
        ("for i in {1..3}; do printf $i; done; echo\n", "123\n"),
    ]);
}
