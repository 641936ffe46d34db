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
