//! `greppy find`: ranked search through the command line, against a real
//! daemon and with none: definitions in eight languages, definitions
//! first, rg's file rules, a folder filter, and answers that follow edits,
//! renames, deletions and a restart.

mod common;

use common::{Daemon, write};
use std::path::Path;

/// A small project in eight languages, with one retry policy setter each
/// and prose about it.
fn project() -> tempfile::TempDir {
    let (t, root) = common::repo();
    let r = root.as_path();
    write(r, ".gitignore", "build/\n");
    write(
        r,
        "README.md",
        "# Client\n\nThe retry policy is set when the client is built; see the docs for \
         how the retry policy, the backoff and the policy's limits are set.\n",
    );
    write(
        r,
        "src/client.rs",
        "use std::time::Duration;\n\n/// How failed calls are tried again.\npub struct RetryPolicy {\n    pub attempts: u32,\n    pub backoff: Duration,\n}\n\nimpl Client {\n    /// Sets the retry policy.\n    pub fn set_retry_policy(&mut self, p: RetryPolicy) {\n        self.retry = p;\n    }\n\n    fn send(&self) {}\n}\n",
    );
    write(
        r,
        "py/client.py",
        "import time\n\nclass Client:\n    def set_retry_policy(self, policy):\n        self.retry = policy\n\n    def _send(self):\n        pass\n",
    );
    write(
        r,
        "go/client.go",
        "package client\n\nfunc (c *Client) SetRetryPolicy(p Policy) {\n\tc.retry = p\n}\n",
    );
    write(
        r,
        "web/client.ts",
        "export interface RetryPolicy {\n  attempts: number;\n}\n\nexport function setRetryPolicy(p: RetryPolicy): void {\n  current = p;\n}\n",
    );
    write(
        r,
        "web/old.js",
        "function setRetryPolicyLegacy(p) {\n  window.retry = p;\n}\n",
    );
    write(
        r,
        "c/client.c",
        "#include \"client.h\"\n\nvoid set_retry_policy(struct client *c, int attempts) {\n    c->attempts = attempts;\n}\n",
    );
    write(
        r,
        "cpp/client.cpp",
        "namespace net {\nclass RetryPolicy {\n  int attempts;\n};\n}\n",
    );
    write(
        r,
        "java/Client.java",
        "public class Client {\n    public void setRetryPolicy(int attempts) {\n        this.attempts = attempts;\n    }\n}\n",
    );
    // Ignored, as rg would: never an answer.
    write(
        r,
        "build/gen.rs",
        "pub fn set_retry_policy_generated() {}\n",
    );
    t
}

#[derive(Debug, serde::Deserialize)]
struct Hit {
    path: String,
    start: u32,
    end: u32,
    kind: String,
    name: String,
}

fn hits(json: &str) -> Vec<Hit> {
    json.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn definitions_in_every_language_come_first() {
    let d = Daemon::start();
    let t = project();
    let root = t.path();
    let out = d.run(
        &[
            "find",
            "where is the retry policy set",
            "--json",
            "-n",
            "20",
        ],
        root,
    );
    let hs = hits(&out);
    // Every language's setter is found, as a definition with its name.
    for (path, name) in [
        ("src/client.rs", "set_retry_policy"),
        ("py/client.py", "set_retry_policy"),
        ("go/client.go", "SetRetryPolicy"),
        ("web/client.ts", "setRetryPolicy"),
        ("web/old.js", "setRetryPolicyLegacy"),
        ("c/client.c", "set_retry_policy"),
        ("java/Client.java", "setRetryPolicy"),
    ] {
        assert!(
            hs.iter().any(|h| h.path == path && h.name == name),
            "{path} {name}: {out}"
        );
    }
    assert!(
        hs.iter()
            .any(|h| h.path == "cpp/client.cpp" && h.kind == "class")
    );
    // Definitions first: the README's prose, which says "retry policy"
    // three times, comes after every definition.
    let prose = hs.iter().position(|h| h.path == "README.md").expect(&out);
    assert!(hs[..prose].iter().all(|h| h.kind != "text"), "{out}");
    assert!(hs[prose..].iter().all(|h| h.kind == "text"), "{out}");
    // The Rust setter's span takes its doc comment and its body.
    let rs = hs
        .iter()
        .find(|h| h.name == "set_retry_policy" && h.path.ends_with(".rs"))
        .unwrap();
    assert_eq!((rs.start, rs.end), (10, 13));
    assert_eq!(rs.kind, "function");
    // rg's rules: the ignored folder is not searched.
    assert!(!out.contains("build/"), "{out}");
    // A name spelled exactly comes first.
    let first = hits(&d.run(&["find", "RetryPolicy", "--json"], root));
    assert_eq!(first[0].name, "RetryPolicy", "{first:?}");
    // The folder filter, and paths named as given.
    let web = hits(&d.run(&["find", "retry policy", "web", "--json"], root));
    assert!(!web.is_empty());
    assert!(web.iter().all(|h| h.path.starts_with("web/")), "{web:?}");
    // The plain output: a heading and the span's first lines.
    let plain = d.run(
        &["find", "set_retry_policy", "src", "-n", "1", "--lines", "2"],
        root,
    );
    assert_eq!(
        plain,
        "src/client.rs:10-13 function set_retry_policy [".to_string()
            + plain.split('[').nth(1).unwrap().split(']').next().unwrap()
            + "]\n    10      /// Sets the retry policy.\n    11      pub fn set_retry_policy(&mut self, p: RetryPolicy) {\n        …\n\n"
    );
    // Nothing found: 1; a folder that is not there: 2.
    let none = d.output(&["find", "zyzzyva"], root);
    assert_eq!(none.status.code(), Some(1));
    assert!(none.stdout.is_empty());
    let bad = d.output(&["find", "retry", "no/such/dir"], root);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no/such/dir"));
    // A query with no word in it: an error that says so, from the daemon
    // and without one.
    for extra in [&[][..], &["--no-daemon"][..]] {
        let empty = d.output(&[&["find"][..], extra, &["--", ":: ()"][..]].concat(), root);
        assert_eq!(empty.status.code(), Some(2));
        assert!(
            String::from_utf8_lossy(&empty.stderr).contains("no words to search for"),
            "{}",
            String::from_utf8_lossy(&empty.stderr)
        );
    }
}

#[test]
fn no_daemon_answers_the_same() {
    let d = Daemon::start();
    let t = project();
    let args = ["find", "retry policy attempts", "--json", "-n", "20"];
    let with = d.run(&args, t.path());
    let mut no = args.to_vec();
    no.push("--no-daemon");
    let without = d.run(&no, t.path());
    let spans = |s: &str| {
        let mut v: Vec<(String, u32, u32)> = hits(s)
            .into_iter()
            .map(|h| (h.path, h.start, h.end))
            .collect();
        v.sort();
        v
    };
    assert!(!with.is_empty());
    assert_eq!(spans(&with), spans(&without));
}

fn names(d: &Daemon, query: &str, root: &Path) -> Vec<String> {
    hits(&d.run(&["find", query, "--json", "-n", "50"], root))
        .into_iter()
        .map(|h| format!("{}:{}", h.path, h.name))
        .collect()
}

#[test]
fn answers_follow_edits_renames_deletions_and_a_restart() {
    let d = Daemon::start();
    let t = project();
    let root = t.path();
    assert!(names(&d, "frobnicate widgets", root).is_empty());
    // A new file is found at once.
    write(root, "src/w.rs", "pub fn frobnicate_widgets() {}\n");
    assert_eq!(
        names(&d, "frobnicate widgets", root),
        ["src/w.rs:frobnicate_widgets"]
    );
    // An edit in place: the old name goes, the new one comes.
    write(root, "src/w.rs", "pub fn defrobnicate_gadgets() {}\n");
    assert!(names(&d, "frobnicate widgets", root).is_empty());
    assert_eq!(
        names(&d, "defrobnicate gadgets", root),
        ["src/w.rs:defrobnicate_gadgets"]
    );
    // A folder renamed: its files answer under the new name only.
    std::fs::rename(root.join("src"), root.join("lib")).unwrap();
    assert_eq!(
        names(&d, "defrobnicate gadgets", root),
        ["lib/w.rs:defrobnicate_gadgets"]
    );
    // A file deleted.
    std::fs::remove_file(root.join("lib/w.rs")).unwrap();
    assert!(names(&d, "defrobnicate gadgets", root).is_empty());
    // Changes made while no daemon runs are found after a restart.
    let o = d.cmd().args(["daemon", "stop"]).output().unwrap();
    assert!(o.status.success());
    write(root, "lib/late.rs", "pub fn arrived_while_stopped() {}\n");
    std::fs::remove_file(root.join("py/client.py")).unwrap();
    let after = names(&d, "arrived while stopped", root);
    assert_eq!(after, ["lib/late.rs:arrived_while_stopped"]);
    let setters = names(&d, "set retry policy", root);
    assert!(!setters.iter().any(|s| s.starts_with("py/")), "{setters:?}");
    assert!(
        setters.iter().any(|s| s.starts_with("lib/client.rs")),
        "{setters:?}"
    );
}

#[test]
fn kill_9_while_the_ranked_index_is_built_or_updated_loses_nothing() {
    let d = Daemon::start();
    let t = project();
    let root = t.path();
    for i in 0..1500 {
        write(
            root,
            &format!("gen/m{i}.rs"),
            &format!("/// Part {i}.\npub fn kill_part_{i}() -> u32 {{\n    {i}\n}}\n"),
        );
    }
    d.index(root);
    for round in 0..3 {
        // A find sent (which builds or updates the ranked index), and the
        // daemon killed while it runs.
        if round > 0 {
            write(
                root,
                &format!("gen/new{round}.rs"),
                &format!("pub fn kill_late_{round}() {{}}\n"),
            );
        }
        let mut c = greppy::client::Client::connect(&d.socket()).unwrap();
        let victim = d.pid();
        let id = c.id();
        c.send(&greppy::protocol::Request::Find {
            id,
            query: greppy::protocol::FindQuery {
                query: "kill part".into(),
                path: root
                    .canonicalize()
                    .unwrap()
                    .into_os_string()
                    .into_encoded_bytes(),
                ..Default::default()
            },
        })
        .unwrap();
        rustix::process::kill_process(
            rustix::process::Pid::from_raw(victim).unwrap(),
            rustix::process::Signal::KILL,
        )
        .unwrap();
        // The next daemon answers from a whole index: every file once.
        d.run(&["daemon", "start"], root);
        for i in [0, 777, 1499] {
            assert_eq!(
                names(&d, &format!("kill_part_{i}"), root)[0],
                format!("gen/m{i}.rs:kill_part_{i}"),
                "round {round}"
            );
        }
        let parts = hits(&d.run(&["find", "kill part", "--json", "-n", "1000"], root));
        let mut seen: Vec<&str> = parts
            .iter()
            .filter(|h| h.name.starts_with("kill_part_"))
            .map(|h| h.name.as_str())
            .collect();
        let n = seen.len();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), n, "round {round}: a definition answered twice");
        if round > 0 {
            assert_eq!(
                names(&d, &format!("kill late {round}"), root)[0],
                format!("gen/new{round}.rs:kill_late_{round}")
            );
        }
    }
}
