//! Writes the seeds whose bytes are greppy's own formats, which change
//! with them: a few framed requests and answers (`fuzz/corpus/greppy-frames`)
//! and a real index file (`fuzz/corpus/greppy-index`). Run it again after
//! the protocol or the index layout changes:
//! `cargo run -p fuzz --example seeds`.

use greppy::index::Index;
use greppy::protocol::{FindQuery, Request, Response, SearchQuery, encode};
use std::path::Path;

fn main() -> std::io::Result<()> {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    // Frames: the first byte is the size of the pieces they arrive in.
    let frames = corpus.join("greppy-frames");
    std::fs::create_dir_all(&frames)?;
    let mut session = vec![7u8];
    for r in [
        Request::Hello {
            version: 1,
            client: "fuzz".into(),
        },
        Request::Search {
            id: 1,
            query: SearchQuery {
                pattern: "fn\\s+main".into(),
                path: b"/src".to_vec(),
                ignore_case: true,
                globs: vec!["*.rs".into()],
                ..Default::default()
            },
        },
        Request::Find {
            id: 2,
            query: FindQuery::default(),
        },
        Request::Cancel { id: 1 },
        Request::Status { id: 3 },
        Request::Index {
            id: 4,
            path: b"/src".to_vec(),
        },
    ] {
        session.extend(encode(&r));
    }
    std::fs::write(frames.join("requests"), &session)?;
    let mut answers = vec![64u8];
    answers.extend(encode(&Response::Hello {
        version: 1,
        server: "greppy".into(),
    }));
    std::fs::write(frames.join("answers"), &answers)?;
    // An index of a small tree: a few source files, one large enough to
    // have blocks and a kept copy.
    let tree = tempfile::tempdir()?;
    let mut files = Vec::new();
    for (name, text) in [
        (
            "a.rs",
            "fn main() {\n    println!(\"needle\");\n}\n".to_string(),
        ),
        ("b/c.py", "def foo():\n    return 'bar'\n".to_string()),
        (
            "b/big.txt",
            (0..900).map(|i| format!("line {i} of filler\n")).collect(),
        ),
        ("bin", "\0\u{1}binary".to_string()),
    ] {
        let p = tree.path().join(name);
        std::fs::create_dir_all(p.parent().expect("a parent"))?;
        std::fs::write(&p, text)?;
        files.push(std::path::PathBuf::from(name));
    }
    // Relative paths: the index names no folder of this machine.
    std::env::set_current_dir(tree.path())?;
    let index = corpus.join("greppy-index");
    std::fs::create_dir_all(&index)?;
    Index::build(files)
        .save(&index.join("small.idx"))
        .map_err(std::io::Error::other)?;
    Ok(())
}
