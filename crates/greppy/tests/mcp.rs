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

/// One `greppy mcp` session with no roots from the client: initialized,
/// and each tool call's result.
struct Session {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Session {
    fn start(cwd: &std::path::Path, runtime: &std::path::Path) -> (Session, Value) {
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
        };
        let init = s.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
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
            if v["id"] == json!(id) {
                return v;
            }
        }
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
