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
