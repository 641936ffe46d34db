//! Redirections and here-documents.

mod common;
use common::{stdin_in, table};

#[test]
fn file_redirections() {
    let d = tempfile::tempdir().unwrap();
    let cases = [
        ("echo one > f; echo two >> f; cat f\n", "one\ntwo\n"),
        ("echo data > f; cat < f\n", "data\n"),
        (
            "echo x > f; set -C; echo y > f 2>/dev/null || echo refused; cat f\n",
            "refused\nx\n",
        ),
        ("set -C; echo y >| f; cat f\n", "y\n"),
        ("echo rw > f; exec 3<> f; read l <&3; echo $l\n", "rw\n"),
        (
            "{ echo out; echo err >&2; } > both 2>&1; cat both\n",
            "out\nerr\n",
        ),
        ("echo a 1>&2 2>/dev/null | wc -c\n", "0\n"),
        ("exec 4>f4; echo via4 >&4; exec 4>&-; cat f4\n", "via4\n"),
        ("echo hi >&-; echo status $?\n", "status 1\n"),
        ("cat < missing 2>/dev/null; echo $?\n", "1\n"),
        ("echo x > f; 3<f cat <&3\n", "x\n"),
        ("echo both &> f; cat f\n", "both\n"),
        ("cat <<< 'here string'\n", "here string\n"),
        (
            "x=$(echo err >&2; echo out) 2>f; echo $x; cat f\n",
            "out\nerr\n",
        ),
    ];
    for (script, out) in cases {
        let r = stdin_in(script, Some(d.path()));
        assert_eq!(r.stdout, out, "{script}\nstderr: {}", r.stderr);
    }
}

#[test]
fn redirections_on_compound_commands_and_functions() {
    let d = tempfile::tempdir().unwrap();
    let cases = [
        ("for i in 1 2; do echo $i; done > f; cat f\n", "1\n2\n"),
        ("if true; then echo in; fi > f; cat f\n", "in\n"),
        ("f() { echo body; }; f > f; cat f\n", "body\n"),
        (
            "while read l; do echo \"<$l>\"; done <<EOF\na\nb\nEOF\n",
            "<a>\n<b>\n",
        ),
    ];
    for (script, out) in cases {
        let r = stdin_in(script, Some(d.path()));
        assert_eq!(r.stdout, out, "{script}\nstderr: {}", r.stderr);
    }
}

#[test]
fn here_documents() {
    table(&[
        (
            "x=v; cat <<EOF\n$x $(echo sub) $((1+1))\nEOF\n",
            "v sub 2\n",
        ),
        ("x=v; cat <<'EOF'\n$x `no`\nEOF\n", "$x `no`\n"),
        ("cat <<\"E\"\n$x\nE\n", "$x\n"),
        ("cat <<-EOF\n\t\tindented\n\tEOF\n", "indented\n"),
        ("cat <<A; cat <<B\none\nA\ntwo\nB\n", "one\ntwo\n"),
        ("cat <<EOF | tr a-z A-Z\npiped\nEOF\n", "PIPED\n"),
        ("cat <<EOF\nback\\slash \\$x\nEOF\n", "back\\slash $x\n"),
    ]);
    // A body larger than a pipe buffer.
    let big = "x".repeat(100_000);
    let script = format!("cat <<EOF | wc -c\n{big}\nEOF\n");
    let r = common::stdin(&script);
    assert_eq!(r.stdout.trim(), "100001");
}
