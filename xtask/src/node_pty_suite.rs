//! node-pty's own tests (`src/unixTerminal.test.ts` and
//! `src/terminal.test.ts` of a fetched microsoft/node-pty, at the tag of
//! the node-pty that npm installs, never committed) as the yardstick of
//! termio's node-pty API (`node/node-pty.js`). The tests are transpiled
//! (TypeScript's `transpileModule`: no type checking), then run with mocha
//! twice, beside two sets of small shims for the modules they import
//! (`./unixTerminal`, `./terminal`, `./windowsTerminal`, and `./lib/index`
//! in the child processes some tests start): once over node-pty itself,
//! once over termio.

use crate::cmd;
use anyhow::{Context, Result, bail};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// The node-pty whose tests run, from npm, and its tag.
const NODE_PTY: &str = "1.1.0";

/// The test files (the other `*.test.ts` are Windows' or the event
/// emitter's, which termio does not take the place of).
const FILES: [&str; 3] = [
    "unixTerminal.test.ts",
    "terminal.test.ts",
    "testUtils.test.ts",
];

/// Tests that look at node-pty's insides (its base class's protected
/// `_checkType`, `UnixTerminal.open()`'s raw master and slave sockets),
/// not at what an application uses through `spawn`.
const INTERNALS: [&str; 3] = [
    "Terminal checkType should throw for the wrong type",
    "Terminal checkType should throw for wrong types within arrays",
    "UnixTerminal open should open a pty with access to a master and slave socket",
];

const TRANSPILE: &str = r#"// node-pty's test files as CommonJS, for mocha (no type checking).
const ts = require('typescript');
const fs = require('fs');
const [src, ...outs] = process.argv.slice(2);
for (const f of process.env.FILES.split(',')) {
  const text = fs.readFileSync(`${src}/${f}`, 'utf8');
  const out = ts.transpileModule(text, { compilerOptions: {
    module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2019, esModuleInterop: true,
  } });
  for (const o of outs) fs.writeFileSync(`${o}/lib/${f.replace(/\.ts$/, '.js')}`, out.outputText);
}
"#;

#[derive(Debug, Clone, Serialize)]
struct Row {
    test: String,
    node_pty: bool,
    termio: bool,
    internals: bool,
}

/// Each test's full title, and whether it passed, from mocha's JSON.
fn outcomes(json: &str) -> Result<BTreeMap<String, bool>> {
    let v: serde_json::Value = serde_json::from_str(json).context("mocha's JSON report")?;
    let mut out = BTreeMap::new();
    for (key, passed) in [("passes", true), ("failures", false)] {
        for t in v[key].as_array().into_iter().flatten() {
            if let Some(title) = t["fullTitle"].as_str() {
                out.insert(title.to_string(), passed);
            }
        }
    }
    Ok(out)
}

fn mocha(dir: &Path) -> Result<BTreeMap<String, bool>> {
    let out = Command::new("node")
        .current_dir(dir)
        .args([
            "node_modules/mocha/bin/mocha.js",
            "--exit",
            "--timeout",
            "20000",
        ])
        .args(["--reporter", "json"])
        .args(["lib/unixTerminal.test.js", "lib/terminal.test.js"])
        .output()
        .context("running mocha")?;
    outcomes(&String::from_utf8_lossy(&out.stdout))
        .with_context(|| String::from_utf8_lossy(&out.stderr).into_owned())
}

pub fn run(checkout: &Path) -> Result<()> {
    let work = crate::target_dir().join("conformance/node-pty");
    let _ = std::fs::remove_dir_all(&work);
    let (peer, ours) = (work.join("node-pty"), work.join("termio"));
    for d in [&peer, &ours] {
        std::fs::create_dir_all(d.join("lib"))?;
    }
    let git_dir = if checkout.join(".git").exists() {
        checkout.join(".git")
    } else {
        checkout.to_path_buf()
    };
    let tag = format!("v{NODE_PTY}");
    if !cmd::git_unpack(&git_dir, &tag, &["src", "fixtures"], &work)?
        || !work.join("src/unixTerminal.test.ts").is_file()
    {
        bail!(
            "{} is not a clone of microsoft/node-pty with the tag {tag}",
            checkout.display()
        );
    }
    std::fs::write(
        work.join("package.json"),
        r#"{"name":"node-pty-suite","private":true}"#,
    )?;
    let pkgs = ["typescript@5", "mocha@10"].map(String::from);
    cmd::run(
        Command::new("npm")
            .current_dir(&work)
            .args(["install", "--no-audit", "--no-fund"])
            .args(&pkgs)
            .arg(format!("node-pty@{NODE_PTY}")),
    )?;
    std::fs::write(work.join("transpile.js"), TRANSPILE)?;
    cmd::run(
        Command::new("node")
            .current_dir(&work)
            .arg("transpile.js")
            .arg("src")
            .args([&peer, &ours])
            .env("FILES", FILES.join(",")),
    )?;
    // The tests find `../fixtures` and `node_modules` from their folder.
    for d in [&peer, &ours] {
        std::os::unix::fs::symlink("../fixtures", d.join("fixtures"))?;
        std::os::unix::fs::symlink("../node_modules", d.join("node_modules"))?;
    }
    let shims = |dir: &Path, files: &[(&str, String)]| -> Result<()> {
        for (name, text) in files {
            std::fs::write(dir.join("lib").join(name), text)?;
        }
        Ok(())
    };
    shims(
        &peer,
        &[
            (
                "unixTerminal.js",
                "module.exports = require('node-pty/lib/unixTerminal');".into(),
            ),
            (
                "terminal.js",
                "module.exports = require('node-pty/lib/terminal');".into(),
            ),
            (
                "windowsTerminal.js",
                "module.exports = require('node-pty/lib/windowsTerminal');".into(),
            ),
            ("index.js", "module.exports = require('node-pty');".into()),
        ],
    )?;
    crate::node::build_debug()?;
    let api = crate::root().join("node/node-pty.js");
    let api = serde_json::to_string(&api.to_string_lossy())?;
    shims(
        &ours,
        &[
            (
                "unixTerminal.js",
                format!(
                    "const {{ Terminal }} = require({api});\nclass UnixTerminal extends Terminal {{}}\nmodule.exports = {{ UnixTerminal }};\n"
                ),
            ),
            // node-pty's base class has no counterpart: its tests are of
            // node-pty's insides (`INTERNALS`).
            (
                "terminal.js",
                "module.exports = { Terminal: class Terminal {} };".into(),
            ),
            ("windowsTerminal.js", "module.exports = {};".into()),
            ("index.js", format!("module.exports = require({api});")),
        ],
    )?;
    let theirs = mocha(&peer)?;
    let mine = mocha(&ours)?;
    let rows: Vec<Row> = theirs
        .keys()
        .chain(mine.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|t| Row {
            test: t.clone(),
            node_pty: theirs.get(t).copied().unwrap_or(false),
            termio: mine.get(t).copied().unwrap_or(false),
            internals: INTERNALS.contains(&t.as_str()),
        })
        .collect();
    let count = |f: fn(&Row) -> bool| rows.iter().filter(|r| f(r)).count();
    println!(
        "\n== node-pty {NODE_PTY}'s own tests ({} tests)\n",
        rows.len()
    );
    println!("{:<28}{:>8}", "program", "passed");
    println!(
        "{:<28}{:>8}",
        format!("node-pty {NODE_PTY}"),
        count(|r| r.node_pty)
    );
    println!(
        "{:<28}{:>8}",
        "termio (termio/node-pty)",
        count(|r| r.termio)
    );
    let failing: Vec<&Row> = rows.iter().filter(|r| r.node_pty && !r.termio).collect();
    println!("\nnode-pty passes and termio fails ({}):", failing.len());
    for r in failing {
        let why = if r.internals {
            " (node-pty's insides)"
        } else {
            ""
        };
        println!("  {}{why}", r.test);
    }
    crate::save_rows("node-pty-suite", &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mochas_json_is_read() {
        let json = r#"{"stats":{},"passes":[{"fullTitle":"A b"}],"failures":[{"fullTitle":"A c","err":{}}]}"#;
        let o = outcomes(json).unwrap();
        assert_eq!(o.get("A b"), Some(&true));
        assert_eq!(o.get("A c"), Some(&false));
        assert!(outcomes("not json").is_err());
    }
}
