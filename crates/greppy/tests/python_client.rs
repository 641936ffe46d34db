//! The Python client (`python/greppy_client.py`) speaks the protocol: its
//! answers equal the Rust client's.

mod common;

use common::Daemon;
use greppy::client::Client;
use greppy::protocol::SearchQuery;
use std::process::Command;

/// A Python with the `msgpack` package: the one on PATH, else Debian's
/// (`python3-msgpack`, which `cargo xtask test` installs).
fn python() -> String {
    for p in ["python3", "/usr/bin/python3"] {
        let ok = Command::new(p)
            .args(["-c", "import msgpack"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return p.to_string();
        }
    }
    panic!("no python3 with msgpack (apt-get install python3-msgpack)");
}

#[test]
fn the_python_client_answers_as_the_rust_one() {
    let d = Daemon::start();
    let (_t, root) = common::repo();
    for i in 0..20 {
        common::write(
            &root,
            &format!("m{i}.py"),
            &format!("def retry_{i}():\n    return {i}\n"),
        );
    }
    std::fs::write(root.join("caf\u{e9}.txt"), b"retry \xff\n").unwrap();
    d.index(&root);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python");
    let code = r#"
import sys
sys.path.insert(0, sys.argv[1])
from greppy_client import Client
with Client() as c:
    for path, line, text in sorted(c.search(sys.argv[3], sys.argv[2], word=True)):
        print(path.hex(), line, text.hex())
    print("fresh", c.fresh)
    for h in c.find("retry 7", sys.argv[2], 3):
        print("hit", h[0].hex(), h[1], h[2], h[4], h[5])
"#;
    let out = Command::new(python())
        .args(["-c", code, script])
        .arg(&root)
        .arg(r"retry(_1\d)?")
        .env("XDG_RUNTIME_DIR", d.dir.path().join("run"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut c = Client::connect(&d.socket()).unwrap();
    let a = c
        .search(SearchQuery {
            pattern: r"retry(_1\d)?".into(),
            path: root.as_os_str().as_encoded_bytes().to_vec(),
            word: true,
            ..SearchQuery::default()
        })
        .unwrap();
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let mut want: Vec<String> = a
        .lines
        .iter()
        .map(|(p, l, t)| format!("{} {l} {}", hex(p), hex(t)))
        .collect();
    want.sort();
    want.push(format!("fresh {}", if a.fresh { "True" } else { "False" }));
    let found = c
        .find(greppy::protocol::FindQuery {
            query: "retry 7".into(),
            path: root.as_os_str().as_encoded_bytes().to_vec(),
            limit: 3,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(found.hits[0].name, "retry_7");
    for h in &found.hits {
        want.push(format!(
            "hit {} {} {} {} {}",
            hex(h.path.as_os_str().as_encoded_bytes()),
            h.start,
            h.end,
            h.kind,
            h.name
        ));
    }
    let got: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
    assert_eq!(got, want);
    assert_eq!(
        want.len(),
        15,
        "10 functions, the non-UTF-8 file, fresh, three hits"
    );
}
