//! Builtins: the special ones, the regular ones, and bash's that agents use.

mod common;
use common::{check, stdin, table};

#[test]
fn special_builtins() {
    table(&[
        (": ignored; echo $?\n", "0\n"),
        ("eval 'x=1; echo $x'\n", "1\n"),
        ("export E=exported; sh -c 'echo $E'\n", "exported\n"),
        ("set -- a b c; shift 2; echo $1\n", "c\n"),
        ("x=1; unset x; echo ${x-gone}\n", "gone\n"),
        (
            "f() { echo f; }; unset -f f; type f >/dev/null 2>&1 || echo nofunc\n",
            "nofunc\n",
        ),
        ("times | wc -l\n", "2\n"),
        ("trap 'echo bye' EXIT; echo hi\n", "hi\nbye\n"),
        ("(exit 7); echo $?\n", "7\n"),
        ("exec echo replaced; echo not-reached\n", "replaced\n"),
    ]);
    check("exit 42\n", "", 42);
    // Assigning a readonly variable ends a non-interactive shell, as in bash.
    check("readonly r=1; r=2; echo not-reached\n", "", 1);
}

#[test]
fn source_and_dot() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("lib.sh"),
        "libvar=loaded\nlibf() { echo \"libf $1\"; }\nreturn 5\necho unreachable\n",
    )
    .unwrap();
    let r = common::stdin_in(
        ". ./lib.sh; echo $? $libvar; source ./lib.sh; libf x\n",
        Some(d.path()),
    );
    assert_eq!(r.stdout, "5 loaded\nlibf x\n", "{}", r.stderr);
    let r = stdin("source /nonexistent/file 2>/dev/null || echo failed-ok\n");
    assert_eq!(r.stdout, "failed-ok\n");
}

#[test]
fn regular_builtins() {
    table(&[
        (
            "cd /tmp && pwd && cd - >/dev/null && [ \"$PWD\" != /tmp ] && echo back\n",
            "/tmp\nback\n",
        ),
        ("cd /; cd ./usr; echo $PWD $OLDPWD\n", "/usr /\n"),
        (
            "mkdir -p /tmp/rush-gone-$$ && cd /tmp/rush-gone-$$ && rmdir $PWD && pwd | grep -c rush-gone\n",
            "1\n",
        ),
        (
            "echo -n a; echo -e 'b\\tc'; echo -E 'd\\te'\n",
            "ab\tc\nd\\te\n",
        ),
        (
            "printf '%s-%d-%05.1f|%x|%-3s|\\n' s 42 3.14159 255 ab\n",
            "s-42-003.1|ff|ab |\n",
        ),
        ("printf '%s\\n' a b c\n", "a\nb\nc\n"),
        ("printf '%b\\n' 'x\\ty'\n", "x\ty\n"),
        ("printf -v out '%03d' 7; echo $out\n", "007\n"),
        ("printf '%q\\n' 'a b'\n", "a\\ b\n"),
        (
            "a=(x y z); printf -v 'a[1]' %s foo; echo ${a[@]}\n",
            "x foo z\n",
        ),
        ("printf -v 1x x 2>/dev/null; echo $?\n", "2\n"),
        ("read -N 3 a b <<< 'xyzw'; echo \"$a|$b\"\n", "xyz|\n"),
        (
            "test 1 -lt 2 && [ abc = abc ] && [ ! -e /nonexistent ] && echo tests\n",
            "tests\n",
        ),
        ("[ -d / -a -f /etc/passwd ] && echo both\n", "both\n"),
        ("true; echo $?; false; echo $?\n", "0\n1\n"),
        ("echo 'a b c' | { read x y; echo \"$y\"; }\n", "b c\n"),
        ("printf 'a\\\\\\nb\\n' | { read x; echo $x; }\n", "ab\n"),
        ("printf 'a\\\\b\\n' | { read -r x; echo $x; }\n", "a\\b\n"),
        ("IFS=: read a b <<EOF\n1:2\nEOF\necho $a $b\n", "1 2\n"),
        ("command -v echo; command -v sh\n", "echo\n/usr/bin/sh\n"),
        ("touch ./nx; command -v ./nx; echo $?; rm nx\n", "1\n"),
        (
            "ls() { echo fn; }; command -p ls / >/dev/null && echo external\n",
            "external\n",
        ),
        (
            "PATH=/nonexistent command -p ls / >/dev/null && echo default-path\n",
            "default-path\n",
        ),
        ("builtin -- echo dd\n", "dd\n"),
        ("type cd | head -1\n", "cd is a shell builtin\n"),
        ("getopts ab: o -b val; echo $o $OPTARG\n", "b val\n"),
        ("set -u; getopts a o -a; echo \"$o[$OPTARG]\"\n", "a[]\n"),
        (
            "f() { local v=1; sh -c 'echo ${v-unexported}'; }; set -a; f\n",
            "1\n",
        ),
        ("umask 027; umask\n", "0027\n"),
        ("sleep 0 & wait; echo waited\n", "waited\n"),
        ("kill -l 15\n", "TERM\n"),
        (
            "f() { local v=1; echo $v; }; f; echo ${v-none}\n",
            "1\nnone\n",
        ),
        ("hash -r; echo $?\n", "0\n"),
        ("ulimit -n >/dev/null && echo limit\n", "limit\n"),
        ("shopt -s extglob; shopt -q extglob && echo on\n", "on\n"),
        ("\\builtin echo via-builtin\n", "via-builtin\n"),
        ("let 'x = 2 + 3'; echo $x\n", "5\n"),
        ("declare -x D=1; sh -c 'echo $D'\n", "1\n"),
        ("jobs; echo none\n", "none\n"),
    ]);
}

#[test]
fn the_claude_code_wrapper_runs() {
    let d = tempfile::tempdir().unwrap();
    let snap = d.path().join("snapshot.sh");
    std::fs::write(
        &snap,
        "alias ll='ls -l'\nexport SNAP=1\nf() { echo from-snapshot; }\n",
    )
    .unwrap();
    let cwd_file = d.path().join("cwd");
    let wrapper = format!(
        "source {} 2>/dev/null || true && shopt -u extglob 2>/dev/null || true && {{ \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; }} >/dev/null 2>&1 || true && eval 'f; echo $SNAP' < /dev/null && pwd -P >| {}",
        snap.display(),
        cwd_file.display()
    );
    let r = common::rush()
        .arg("-c")
        .arg(&wrapper)
        .current_dir(d.path())
        .output()
        .unwrap();
    let r: common::Run = r.into();
    assert_eq!(r.stdout, "from-snapshot\n1\n", "{}", r.stderr);
    assert_eq!(r.status, 0);
    let cwd = std::fs::read_to_string(&cwd_file).unwrap();
    assert_eq!(
        cwd.trim(),
        d.path().canonicalize().unwrap().to_str().unwrap()
    );
}

#[test]
fn jobs_wait_and_pipestatus() {
    table(&[
        (
            "false | (exit 3) | true; echo ${PIPESTATUS[@]}\n",
            "1 3 0\n",
        ),
        ("false; echo ${PIPESTATUS[0]}\n", "1\n"),
        (
            "{ sleep 0.2; exit 9; } & { exit 3; } & wait -n; echo $?; wait -n; echo $?\n",
            "3\n9\n",
        ),
        (
            "sleep 0.1 & sleep 0.1 | cat & jobs -p | wc -l; jobs | wc -l; wait\n",
            "2\n2\n",
        ),
        ("wait 12345678 2>/dev/null; echo $?\n", "127\n"),
        ("wait zzz 2>/dev/null; echo $?\n", "2\n"),
        ("wait -n; echo $?\n", "127\n"),
        ("(exit 5) & wait $!; echo $? ${PIPESTATUS[0]}\n", "5 5\n"),
    ]);
}

#[test]
fn eval_source_and_exec_details() {
    table(&[
        ("eval -- 'echo dashdash'\n", "dashdash\n"),
        ("eval -z 2>/dev/null; echo $?\n", "2\n"),
        ("eval 'if' 2>/dev/null; echo status=$?\n", "status=2\n"),
        (
            "x=old; x=new >/nonexistent/f 2>/dev/null; echo $x\n",
            "old\n",
        ),
        ("(exec -a NAME sh -c 'echo $0')\n", "NAME\n"),
        ("exec -- 3>&1; echo via3 >&3\n", "via3\n"),
        // A function's own local stays local when unset (bash).
        (
            "x=global; f() { local x=loc; unset x; echo ${x-unset}; }; f\n",
            "unset\n",
        ),
    ]);
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("lib.sh"), "echo sourced $1\n").unwrap();
    let f = d.path().join("noshebang");
    common::write_executable(&f, "echo no-shebang $1\n");
    let r = common::stdin_in(
        "source -- ./lib.sh a\n(exec ./noshebang b)\n",
        Some(d.path()),
    );
    assert_eq!(r.stdout, "sourced a\nno-shebang b\n", "{}", r.stderr);
}

#[test]
fn mapfile_globbing_options_and_time() {
    table(&[
        (
            "printf 'a\\nb\\nc\\n' | { mapfile -t L; echo ${#L[@]} ${L[2]}; }\n",
            "3 c\n",
        ),
        (
            "printf 'a\\nb\\nc\\n' | { readarray -s 1 -n 1 L; echo \"[${L[0]}]\"; }\n",
            "[b\n]\n",
        ),
        ("shopt -s nullglob; set -- /nonexistent/*; echo $#\n", "0\n"),
    ]);
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join(".hidden"), "").unwrap();
    let r = common::stdin_in("echo *; shopt -s dotglob; echo *\n", Some(d.path()));
    assert_eq!(r.stdout, "*\n.hidden\n");
    let r = common::dash_c("time sleep 0.01", &[]);
    assert!(
        r.stderr.contains("real") && r.stderr.contains("user") && r.stderr.contains("sys"),
        "{}",
        r.stderr
    );
}

#[test]
fn bash_forms_agents_use() {
    table(&[
        ("for ((i=0; i<3; i++)); do printf $i; done; echo\n", "012\n"),
        ("for ((;;)); do break; done; echo out\n", "out\n"),
        ("set -- a b c; echo \"${!#}\"\n", "c\n"),
        (
            "[[ abc =~ ^a(b)c$ ]] && echo \"${BASH_REMATCH[1]} ${BASH_REMATCH[0]}\"\n",
            "b abc\n",
        ),
        ("s=$'a\\nb'; echo \"${s//$'\\n'/,}\"\n", "a,b\n"),
        ("declare -i n=5; n+=2; echo $n; n=3*4; echo $n\n", "7\n12\n"),
        (
            "f() { local -i x=1+1; local -r r=1; echo $x $r; }; f\n",
            "2 1\n",
        ),
        ("set -euo pipefail; echo $-\n", "ehuBs\n"),
        (
            "f() { echo \"$FUNCNAME\"; g; }; g() { echo \"${FUNCNAME[@]}\"; }; f\n",
            "f\ng f\n",
        ),
        ("hash ls; hash -t ls | grep -c /ls\n", "1\n"),
        ("declare -p nosuch 2>/dev/null; echo $?\n", "1\n"),
    ]);
}
