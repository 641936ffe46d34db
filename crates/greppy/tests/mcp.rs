//! `greppy mcp` speaks the Model Context Protocol on stdio: a real client
//! session (initialize, tools/list, tools/call) against a real daemon.

mod common;

use common::Daemon;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

#[test]
fn an_agent_searches_and_reads_through_mcp() {
    let d = Daemon::start();
    let (_t, root) = common::repo();
    for i in 0..20 {
        common::write(
            &root,
            &format!("src/f{i}.rs"),
            &format!("// file {i}\nfn handler_{i}() {{ retry({i}) }}\n"),
        );
    }
    d.index(&root);
    let mut child = Command::new(env!("CARGO_BIN_EXE_greppy"))
        .arg("mcp")
        .current_dir(&root)
        .env("XDG_RUNTIME_DIR", d.dir.path().join("run"))
        .env("XDG_CACHE_HOME", d.dir.path().join("cache"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut send = |v: Value| {
        writeln!(input, "{v}").unwrap();
        input.flush().unwrap();
    };
    let mut answer = |id: u64| -> Value {
        loop {
            let mut line = String::new();
            assert!(
                output.read_line(&mut line).unwrap() > 0,
                "the server hung up"
            );
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["id"] == json!(id) {
                return v;
            }
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}}}),
    );
    let init = answer(1);
    assert!(
        init["result"]["capabilities"]["tools"].is_object(),
        "{init}"
    );
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let tools = answer(2);
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"search") && names.contains(&"find") && names.contains(&"read"),
        "{tools}"
    );
    send(
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "search", "arguments": {"pattern": r"handler_7\b"}}}),
    );
    let found = answer(3);
    assert_eq!(
        found["result"]["content"][0]["text"],
        json!("src/f7.rs:2:fn handler_7() { retry(7) }\n"),
        "{found}"
    );
    send(
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "search", "arguments": {"pattern": "retry", "limit": 3}}}),
    );
    let limited = answer(4);
    let text = limited["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(text.lines().count(), 4, "three lines and a note: {text}");
    send(
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "read", "arguments": {"path": "src/f3.rs", "start": 2, "end": 2}}}),
    );
    let read = answer(5);
    assert_eq!(
        read["result"]["content"][0]["text"],
        json!("2: fn handler_3() { retry(3) }\n"),
        "{read}"
    );
    // A bad pattern and a missing file are tool errors, not crashes.
    send(
        json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {
        "name": "search", "arguments": {"pattern": "[unclosed"}}}),
    );
    assert_eq!(answer(6)["result"]["isError"], json!(true));
    send(
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "read", "arguments": {"path": "nope.rs"}}}),
    );
    assert_eq!(answer(7)["result"]["isError"], json!(true));
    // Ranked: the function whose name spells the query comes first, with
    // its lines.
    send(
        json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {
        "name": "find", "arguments": {"query": "handler 12", "limit": 2, "lines": 1}}}),
    );
    let ranked = answer(8);
    let text = ranked["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("src/f12.rs:1-2 function handler_12 ["),
        "{text}"
    );
    assert!(text.contains("     1  // file 12\n"), "{text}");
    drop(input);
    assert!(child.wait().unwrap().success());
}

/// One `greppy mcp` session: initialized, and each tool call's result.
/// With `roots`, the client offers roots and answers the server's
/// `roots/list` with them.
struct Session {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: BufReader<std::process::ChildStdout>,
    next: u64,
    roots: Option<Vec<String>>,
}

impl Session {
    fn start(cwd: &std::path::Path, runtime: &std::path::Path) -> (Session, Value) {
        Session::with_roots(cwd, runtime, None)
    }

    fn with_roots(
        cwd: &std::path::Path,
        runtime: &std::path::Path,
        roots: Option<Vec<String>>,
    ) -> (Session, Value) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_greppy"))
            .arg("mcp")
            .current_dir(cwd)
            .env("XDG_RUNTIME_DIR", runtime.join("run"))
            .env("XDG_CACHE_HOME", runtime.join("cache"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut s = Session {
            child,
            input,
            output,
            next: 1,
            roots,
        };
        let capabilities = match s.roots {
            Some(_) => json!({"roots": {"listChanged": true}}),
            None => json!({}),
        };
        let init = s.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": capabilities,
                "clientInfo": {"name": "test", "version": "0"}}),
        );
        writeln!(
            s.input,
            "{}",
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        )
        .unwrap();
        (s, init)
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        let v = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        writeln!(self.input, "{v}").unwrap();
        self.input.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.output.read_line(&mut line).unwrap() > 0,
                "the server hung up"
            );
            let v: Value = serde_json::from_str(&line).unwrap();
            if v["method"] == json!("roots/list") {
                let roots: Vec<Value> = self
                    .roots
                    .iter()
                    .flatten()
                    .map(|r| json!({"uri": format!("file://{r}")}))
                    .collect();
                let answer = json!({"jsonrpc": "2.0", "id": v["id"], "result": {"roots": roots}});
                writeln!(self.input, "{answer}").unwrap();
                self.input.flush().unwrap();
            } else if v["id"] == json!(id) {
                return v;
            }
        }
    }

    /// Says the roots changed, and calls `tool` right after: the
    /// call must see the new roots.
    fn change_roots_and_call(
        &mut self,
        roots: Vec<String>,
        tool: &str,
        args: Value,
    ) -> (String, bool) {
        self.roots = Some(roots);
        let changed = json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"});
        writeln!(self.input, "{changed}").unwrap();
        self.call(tool, args)
    }

    /// A tool's text, and whether it is an error.
    fn call(&mut self, tool: &str, args: Value) -> (String, bool) {
        let r = self.request("tools/call", json!({"name": tool, "arguments": args}));
        let text = r["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        (text, r["result"]["isError"] == json!(true))
    }
}

#[test]
fn the_tools_read_nothing_outside_the_tree_the_server_started_in() {
    let runtime = tempfile::tempdir().unwrap();
    let (_t, root) = common::repo();
    common::write(&root, "src/a.rs", "fn inside() {}\n");
    std::os::unix::fs::symlink("/etc", root.join("etc_link")).unwrap();
    let (mut s, init) = Session::start(&root, runtime.path());
    // It names itself, with its version.
    assert_eq!(
        init["result"]["serverInfo"]["name"],
        json!("greppy"),
        "{init}"
    );
    assert_eq!(
        init["result"]["serverInfo"]["version"],
        json!(env!("CARGO_PKG_VERSION"))
    );
    let (text, err) = s.call("read", json!({"path": "src/a.rs"}));
    assert!(!err && text == "1: fn inside() {}\n", "{text}");
    for outside in [
        "/etc/passwd",
        "../../../../../../etc/passwd",
        "etc_link/passwd",
    ] {
        let (text, err) = s.call("read", json!({"path": outside}));
        assert!(
            err && text.contains("outside the roots") && !text.contains("root:x:0"),
            "{outside}: {text}"
        );
    }
    for outside in ["/etc", "..", "etc_link"] {
        let (text, err) = s.call("search", json!({"pattern": "root", "path": outside}));
        assert!(
            err && text.contains("outside the roots"),
            "{outside}: {text}"
        );
        let (text, err) = s.call("find", json!({"query": "root", "path": outside}));
        assert!(
            err && text.contains("outside the roots"),
            "{outside}: {text}"
        );
    }
    // Inside, a search does not follow the link out.
    let (text, err) = s.call("search", json!({"pattern": "root:x:0"}));
    assert!(!err && text == "no match\n", "{text}");
    drop(s.input);
    assert!(s.child.wait().unwrap().success());
}

/// The client's roots change, and its next call comes right after:
/// the server handles messages in the order they came, so the call keeps
/// to the new roots (a race once: the call could run before the
/// notification, with the old roots, and the SDK test failed in CI).
#[test]
fn a_call_after_the_roots_change_keeps_to_the_new_roots() {
    let runtime = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let work = work.path().canonicalize().unwrap();
    let (a, b) = (work.join("a"), work.join("b"));
    common::write(&a, "a.txt", "in a\n");
    common::write(&b, "b.txt", "in b\n");
    let (a, b) = (a.display().to_string(), b.display().to_string());
    let (mut s, _) = Session::with_roots(&work, runtime.path(), Some(vec![a.clone()]));
    let (text, err) = s.call("read", json!({"path": "a.txt"}));
    assert!(!err && text == "1: in a\n", "{text}");
    for round in 0..100 {
        let (root, file, line) = if round % 2 == 0 {
            (&b, "b.txt", "1: in b\n")
        } else {
            (&a, "a.txt", "1: in a\n")
        };
        let (text, err) =
            s.change_roots_and_call(vec![root.clone()], "read", json!({"path": file}));
        assert!(!err && text == line, "round {round}: {text}");
    }
    drop(s.input);
    assert!(s.child.wait().unwrap().success());
}
