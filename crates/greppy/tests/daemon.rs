//! The daemon's core on a real socket: answers equal a scan's, pipelining,
//! and every bound answered explicitly (bad frames, floods, strangers).

use greppy::daemon::{self, Limits};
use greppy::protocol::{self, Decoder, Request, Response, SearchQuery};
use greppy::search::{self, Filters, Pattern};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;

mod common;

use common::Server;

fn server(limits: Limits) -> Server {
    Server::start(limits)
}

struct Client {
    s: UnixStream,
    d: Decoder,
}

impl Client {
    fn connect(path: &Path) -> Client {
        let s = UnixStream::connect(path).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
            .unwrap();
        Client {
            s,
            d: Decoder::new(64 << 20),
        }
    }
    fn send(&mut self, r: &Request) {
        self.s.write_all(&protocol::encode(r)).unwrap();
    }
    /// The next message, or `None` when the daemon closed the connection.
    fn recv(&mut self) -> Option<Response> {
        loop {
            if let Some(m) = self.d.decode::<Response>().unwrap() {
                return Some(m);
            }
            let mut buf = vec![0u8; 65536];
            match self.s.read(&mut buf) {
                Ok(0) | Err(_) => return None,
                Ok(n) => self.d.push(&buf[..n]),
            }
        }
    }
    fn hello(path: &Path) -> Client {
        let mut c = Client::connect(path);
        c.send(&Request::Hello {
            version: protocol::VERSION,
            client: "test".into(),
        });
        assert!(matches!(
            c.recv(),
            Some(Response::Hello {
                version: protocol::VERSION,
                ..
            })
        ));
        c
    }
}

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..40 {
        let text = format!(
            "fn handler_{i}() {{}}\n// retry policy {}\nlet x = {i};\n",
            i % 3
        );
        std::fs::write(dir.path().join(format!("f{i}.rs")), text).unwrap();
    }
    std::fs::write(dir.path().join("odd\u{e9}.txt"), b"retry \xff\n").unwrap();
    // A file large enough for blocks, with matches in a few of them.
    let mut big = String::new();
    for n in 0..8000 {
        big.push_str(&format!("filler line {n}\n"));
        if n == 4321 {
            big.push_str("// retry policy 1, inside a large file\n");
        }
    }
    big.push_str("fn handler_big() {}\n");
    std::fs::write(dir.path().join("big.rs"), big).unwrap();
    dir
}

fn query(root: &Path, pattern: &str) -> SearchQuery {
    SearchQuery {
        pattern: pattern.into(),
        path: root
            .canonicalize()
            .unwrap()
            .into_os_string()
            .into_encoded_bytes(),
        ..SearchQuery::default()
    }
}

/// Indexes `root` and waits until the daemon answers from the index.
fn index(c: &mut Client, root: &Path) {
    let path = root.to_path_buf().into_os_string().into_encoded_bytes();
    c.send(&Request::Index { id: 1000, path });
    assert!(matches!(c.recv(), Some(Response::Indexed { id: 1000, .. })));
}

/// A daemon with `limits`, the test [`tree`] indexed, and the greeted
/// connection that indexed it.
fn indexed(limits: Limits) -> (Server, tempfile::TempDir, Client) {
    let srv = server(limits);
    let t = tree();
    let mut c = Client::hello(&srv.socket);
    index(&mut c, t.path());
    (srv, t, c)
}

/// The (path, line) pairs a scan finds.
fn scan(root: &Path, pattern: &str) -> Vec<(Vec<u8>, u64)> {
    let root = root.canonicalize().unwrap();
    let (files, _) = search::walk(&[root], &Filters::default()).unwrap();
    let p = Pattern {
        pattern: pattern.into(),
        ..Pattern::default()
    };
    let mut v: Vec<(Vec<u8>, u64)> =
        search::lines(files.iter().map(PathBuf::as_path).collect::<Vec<_>>(), &p)
            .unwrap()
            .into_iter()
            .map(|(p, l)| (p.into_os_string().into_encoded_bytes(), l))
            .collect();
    v.sort();
    v
}

#[test]
fn searches_answer_as_a_scan_and_pipeline() {
    let (_srv, t, mut c) = indexed(Limits::default());
    let patterns = ["retry policy 1", r"handler_\d+", "nothing_here", "retry"];
    // All sent before any answer is read: pipelined.
    for (i, p) in patterns.iter().enumerate() {
        c.send(&Request::Search {
            id: i as u64,
            query: query(t.path(), p),
        });
    }
    let mut found: Vec<Vec<(Vec<u8>, u64)>> = vec![Vec::new(); patterns.len()];
    let mut done = 0;
    while done < patterns.len() {
        match c.recv().expect("an answer") {
            Response::Match { id, path, line, .. } => found[id as usize].push((path, line)),
            Response::Done {
                id,
                matches,
                fresh,
                cancelled,
                errors,
                note,
            } => {
                assert_eq!(matches as usize, found[id as usize].len());
                assert!(fresh && !cancelled && errors.is_empty() && note.is_none());
                done += 1;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    for (i, p) in patterns.iter().enumerate() {
        found[i].sort();
        assert_eq!(found[i], scan(t.path(), p), "{p}");
    }
    assert!(!found[3].is_empty() && found[2].is_empty());
    // A limit, and a bad pattern answered by its id.
    let mut q = query(t.path(), "retry");
    q.limit = 5;
    c.send(&Request::Search { id: 9, query: q });
    c.send(&Request::Search {
        id: 10,
        query: query(t.path(), "[unclosed"),
    });
    let (mut limited, mut errors) = (0, 0);
    while limited + errors < 2 {
        match c.recv().unwrap() {
            Response::Done { id: 9, matches, .. } => {
                assert_eq!(matches, 5);
                limited += 1;
            }
            Response::Error { id: Some(10), .. } => errors += 1,
            _ => {}
        }
    }
}

#[test]
fn bad_frames_close_only_their_connection() {
    let (srv, t, mut other) = indexed(Limits {
        frame: 4096,
        ..Limits::default()
    });
    // Garbage after the handshake.
    let mut c = Client::hello(&srv.socket);
    c.s.write_all(&[0, 0, 0, 3, 0xc1, 0xc1, 0xc1]).unwrap();
    assert!(matches!(c.recv(), Some(Response::Error { id: None, .. })));
    assert_eq!(c.recv(), None, "closed");
    // An oversized frame.
    let mut c = Client::hello(&srv.socket);
    c.s.write_all(&100_000u32.to_be_bytes()).unwrap();
    assert!(
        matches!(c.recv(), Some(Response::Error { message, .. }) if message.contains("over the limit"))
    );
    assert_eq!(c.recv(), None);
    // No hello first.
    let mut c = Client::connect(&srv.socket);
    c.send(&Request::Cancel { id: 1 });
    assert!(matches!(c.recv(), Some(Response::Error { .. })));
    assert_eq!(c.recv(), None);
    // Another version.
    let mut c = Client::connect(&srv.socket);
    c.send(&Request::Hello {
        version: 99,
        client: "x".into(),
    });
    assert!(matches!(c.recv(), Some(Response::Error { message, .. }) if message.contains("99")));
    // A frame cut in the middle, then the client leaves.
    let mut c = Client::hello(&srv.socket);
    let f = protocol::encode(&Request::Search {
        id: 1,
        query: query(t.path(), "retry"),
    });
    c.s.write_all(&f[..f.len() / 2]).unwrap();
    drop(c);
    // The first connection never noticed.
    other.send(&Request::Search {
        id: 1,
        query: query(t.path(), "handler_7"),
    });
    assert!(matches!(
        other.recv(),
        Some(Response::Match { line: 1, .. })
    ));
    assert!(matches!(
        other.recv(),
        Some(Response::Done { matches: 1, .. })
    ));
}

#[test]
fn a_slow_writer_loses_only_its_connection() {
    let (srv, t, mut other) = indexed(Limits {
        frame_time: std::time::Duration::from_millis(300),
        ..Limits::default()
    });
    // Half a frame, then nothing: the daemon gives up on it.
    let mut slow = Client::hello(&srv.socket);
    let f = protocol::encode(&Request::Search {
        id: 1,
        query: query(t.path(), "retry"),
    });
    slow.s.write_all(&f[..f.len() / 2]).unwrap();
    let started = std::time::Instant::now();
    assert!(
        matches!(slow.recv(), Some(Response::Error { message, .. }) if message.contains("whole"))
    );
    assert_eq!(slow.recv(), None, "closed");
    assert!(started.elapsed() >= std::time::Duration::from_millis(250));
    // An idle kept connection is not a slow writer, and the others go on.
    other.send(&Request::Search {
        id: 2,
        query: query(t.path(), "handler_7"),
    });
    assert!(matches!(other.recv(), Some(Response::Match { id: 2, .. })));
}

#[test]
fn a_connection_flood_gets_busy() {
    let srv = server(Limits {
        connections: 4,
        ..Limits::default()
    });
    // A client may send its request with its greeting (on a daemon of
    // its own: a closed connection frees its slot a moment later).
    let t = tree();
    let other = server(Limits::default());
    let mut eager = greppy::client::Client::connect_pipelined(&other.socket).unwrap();
    assert_eq!(eager.server(), "");
    // (Answered by a scan or the index: the tree is new to the daemon.)
    eager.search(query(t.path(), "retry")).unwrap();
    assert!(eager.server().starts_with("greppy "), "{}", eager.server());
    let kept: Vec<Client> = (0..4).map(|_| Client::hello(&srv.socket)).collect();
    let mut fifth = Client::connect(&srv.socket);
    assert_eq!(fifth.recv(), Some(Response::Busy { id: None }));
    assert_eq!(fifth.recv(), None);
    // Then it learns that the daemon is busy from that request (or from
    // its greeting, if the daemon closed the connection before it went).
    let busy = match greppy::client::Client::connect_pipelined(&srv.socket) {
        Err(e) => e,
        Ok(mut c) => c.search(query(t.path(), "retry")).unwrap_err(),
    };
    assert!(matches!(busy, greppy::client::Error::Busy), "{busy:?}");
    drop(kept);
}

#[test]
fn the_socket_is_private_and_strangers_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let srv = server(Limits::default());
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&srv.socket), 0o600);
    assert_eq!(mode(srv.socket.parent().unwrap()), 0o700);
    // A second daemon on the same socket is refused.
    assert!(daemon::bind(&srv.socket).is_err());
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped the stranger: needs root to run a client as nobody");
        return;
    }
    // Open the door, so that only SO_PEERCRED stands in the way.
    std::fs::set_permissions(
        srv.socket.parent().unwrap(),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::set_permissions(&srv.socket, std::fs::Permissions::from_mode(0o666)).unwrap();
    for dir in srv.socket.ancestors().skip(2).take(2) {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    use std::os::unix::process::CommandExt;
    let out = std::process::Command::new("python3")
        .args(["-c", "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(65536).hex())"])
        .arg(&srv.socket)
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let hex = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes: Vec<u8> = (0..hex.trim().len() / 2)
        .map(|i| u8::from_str_radix(&hex.trim()[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let mut d = Decoder::new(1 << 20);
    d.push(&bytes);
    match d.decode::<Response>().unwrap() {
        Some(Response::Error { message, .. }) => {
            assert!(message.contains("another user"), "{message}");
        }
        other => panic!("a stranger got {other:?}"),
    }
}

/// With `candidates`, the daemon names the files that may match without
/// reading them; without, only those that do.
#[test]
fn candidates_are_answered_unread() {
    let s = server(Limits::default());
    let dir = tempfile::tempdir().unwrap();
    // Every trigram of `abcdef`, each followed by the byte that follows it
    // in `abcdef`, but never the word itself.
    std::fs::write(dir.path().join("near.txt"), "abcdZ\nbcdeZ\ncdefZ\n").unwrap();
    std::fs::write(dir.path().join("far.txt"), "nothing here\n").unwrap();
    let mut c = greppy::client::Client::connect(&s.socket).unwrap();
    c.index(dir.path()).unwrap();
    let ask = |candidates| SearchQuery {
        files: true,
        candidates,
        wait_ms: 30_000,
        ..query(dir.path(), "abcdef")
    };
    assert!(c.search(ask(false)).unwrap().files.is_empty());
    let near = dir.path().join("near.txt");
    assert_eq!(
        c.search(ask(true)).unwrap().files,
        [near.as_os_str().as_encoded_bytes()]
    );
}

/// Files named by the index may be gone by the time they are read: with
/// `gone_ok` that is no match, not an error; without it, rg's error.
#[test]
fn a_file_gone_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let gone = vec![(dir.path().join("gone.rs"), None)];
    let mut opts = search::Options {
        pattern: Pattern {
            pattern: "x".into(),
            ..Pattern::default()
        },
        ..search::Options::default()
    };
    let o = search::search(&gone, &opts.pattern.matcher().unwrap(), &opts).unwrap();
    assert!(!o.matched);
    assert_eq!(o.errors.len(), 1, "{:?}", o.errors);
    opts.gone_ok = true;
    let o = search::search(&gone, &opts.pattern.matcher().unwrap(), &opts).unwrap();
    assert!(!o.matched && o.errors.is_empty(), "{:?}", o.errors);
}

/// A search with `print` answers rg's output file by file, in the order
/// the command line sorts paths in (by component: `a/c.rs` before `a.rs`),
/// named as asked.
#[test]
fn printed_answers_are_rgs_output_in_path_order() {
    let s = server(Limits::default());
    let dir = tempfile::tempdir().unwrap();
    let t = dir.path().join("t");
    std::fs::create_dir_all(t.join("a")).unwrap();
    std::fs::write(t.join("a/c.rs"), "retry two\n").unwrap();
    std::fs::write(t.join("a.rs"), "retry three\nretry four\n").unwrap();
    std::fs::write(t.join("b.rs"), "none\nretry one\n").unwrap();
    std::fs::write(t.join("c.rs"), "nothing\n").unwrap();
    let mut c = greppy::client::Client::connect(&s.socket).unwrap();
    c.index(&t).unwrap();
    let ask = |print: protocol::Print| SearchQuery {
        display: b"t".to_vec(),
        wait_ms: 30_000,
        print: Some(print),
        ..query(&t, "retry")
    };
    let lines = protocol::Print {
        output: "lines".into(),
        line_number: true,
        with_path: true,
        ..protocol::Print::default()
    };
    let a = c.search(ask(lines.clone())).unwrap();
    assert!(a.files.is_empty() && a.lines.is_empty());
    assert_eq!(
        String::from_utf8(a.printed.concat()).unwrap(),
        "t/a/c.rs:1:retry two\nt/a.rs:1:retry three\nt/a.rs:2:retry four\nt/b.rs:2:retry one\n"
    );
    let a = c
        .search(ask(protocol::Print {
            output: "count".into(),
            bare: true,
            ..lines.clone()
        }))
        .unwrap();
    assert_eq!(
        String::from_utf8(a.printed.concat()).unwrap(),
        "a/c.rs:1\na.rs:2\nb.rs:1\n"
    );
    let a = c
        .search(ask(protocol::Print {
            max_count: 1,
            color: true,
            ..lines.clone()
        }))
        .unwrap();
    let text = String::from_utf8(a.printed.concat()).unwrap();
    assert!(text.contains("\x1b["), "colours: {text:?}");
    assert!(!text.contains("four"), "-m 1: {text:?}");
    // A bad output is an error, not a guess, also where no file is a
    // candidate (the matcher is then never built).
    for pattern in ["retry", "zzqq_in_no_file"] {
        let e = c.search(SearchQuery {
            pattern: pattern.into(),
            ..ask(protocol::Print {
                output: "pretty".into(),
                ..lines.clone()
            })
        });
        assert!(
            matches!(e, Err(greppy::client::Error::Daemon(ref m)) if m.contains("pretty")),
            "{pattern}: {e:?}"
        );
    }
    // A bad pattern is an error whether or not a file may hold it; a
    // plain word that no file holds is no match.
    for pattern in ["retry(", "zzqq(_in_no_file"] {
        let e = c.search(SearchQuery {
            pattern: pattern.into(),
            ..ask(lines.clone())
        });
        assert!(
            matches!(e, Err(greppy::client::Error::Daemon(_))),
            "{pattern}: {e:?}"
        );
    }
    // A literal with a newline is refused as rg refuses it, also in a
    // tree with no file to read.
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    c.index(&empty).unwrap();
    for root in [&t, &empty] {
        let e = c.search(SearchQuery {
            pattern: "zzqq\nyyxx".into(),
            fixed: true,
            wait_ms: 30_000,
            ..query(root, "")
        });
        assert!(
            matches!(e, Err(greppy::client::Error::Daemon(ref m)) if m.contains("not allowed")),
            "{}: {e:?}",
            root.display()
        );
    }
    let a = c
        .search(SearchQuery {
            pattern: "zzqq_in_no_file".into(),
            ..ask(lines)
        })
        .unwrap();
    assert!(a.printed.concat().is_empty() && a.errors.is_empty());
}

/// A matching line longer than a request may be (a minified bundle) comes
/// back whole: the client accepts answers larger than requests.
#[test]
fn a_line_of_megabytes_is_answered_whole() {
    let s = server(Limits::default());
    let dir = tempfile::tempdir().unwrap();
    let mut line = "x".repeat(3 << 20);
    line.push_str(" needle_in_a_bundle");
    std::fs::write(dir.path().join("bundle.js"), format!("{line}\nshort\n")).unwrap();
    let mut c = greppy::client::Client::connect(&s.socket).unwrap();
    c.index(dir.path()).unwrap();
    let a = c
        .search(SearchQuery {
            wait_ms: 30_000,
            ..query(dir.path(), "needle_in_a_bundle")
        })
        .unwrap();
    assert_eq!(a.lines.len(), 1);
    assert_eq!(a.lines[0].2, line.as_bytes());
}

#[test]
fn a_client_that_stops_reading_holds_only_its_own_searches() {
    // One search answers more than the connection's queue and the socket
    // hold, and small ones follow it on the same connection, whose client
    // reads nothing for a while: their answers wait (the small ones on the
    // runtime's workers, which must not stall), and another client is
    // answered meanwhile. Then every answer arrives, whole and in order.
    let s = server(Limits::default());
    let dir = tempfile::tempdir().unwrap();
    let line = format!("flood_line {}\n", "y".repeat(100));
    std::fs::write(dir.path().join("flood.txt"), line.repeat(200_000)).unwrap();
    std::fs::write(dir.path().join("small.rs"), "fn quiet_needle() {}\n").unwrap();
    let mut b = greppy::client::Client::connect(&s.socket).unwrap();
    b.index(dir.path()).unwrap();

    let mut a = Client::hello(&s.socket);
    a.send(&Request::Search {
        id: 1,
        query: query(dir.path(), "flood_line"),
    });
    for id in 2..=40 {
        a.send(&Request::Search {
            id,
            query: query(dir.path(), "quiet_needle"),
        });
    }
    for _ in 0..20 {
        let got = b.search(query(dir.path(), "quiet_needle")).unwrap();
        assert_eq!(got.lines.len(), 1);
    }

    let (mut flood, mut small, mut done) = (0u64, 0u64, Vec::new());
    while done.len() < 40 {
        match a.recv().expect("the connection stays open") {
            Response::Match { id: 1, .. } => flood += 1,
            Response::Match { .. } => small += 1,
            Response::Done { id, matches, .. } => {
                if id == 1 {
                    assert_eq!(matches, 200_000);
                }
                done.push(id);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(flood, 200_000);
    assert_eq!(small, 39);
    done.sort_unstable();
    assert_eq!(done, (1..=40).collect::<Vec<u64>>());
}

/// The (path, line) pairs a search finds, and the answer that ends it.
fn search_pairs(c: &mut Client, id: u64, q: SearchQuery) -> (Vec<(Vec<u8>, u64)>, Response) {
    c.send(&Request::Search { id, query: q });
    let mut found = Vec::new();
    loop {
        match c.recv().expect("an answer") {
            Response::Match { path, line, .. } => found.push((path, line)),
            last => {
                found.sort();
                return (found, last);
            }
        }
    }
}

/// A root is searched by its own path, through a link to it, and, once
/// made again in its place (another folder, another inode), as it is now:
/// never from the index of the folder that was there.
#[test]
fn a_root_named_by_a_link_or_made_again_is_searched_as_it_is() {
    let srv = server(Limits::default());
    let top = tempfile::tempdir().unwrap();
    let root = top.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("a.rs"), "fn first_needle() {}\n").unwrap();
    let root = root.canonicalize().unwrap();
    let mut c = Client::hello(&srv.socket);
    index(&mut c, &root);
    let (found, last) = search_pairs(&mut c, 1, query(&root, "first_needle"));
    assert_eq!(found, scan(&root, "first_needle"));
    assert!(
        matches!(last, Response::Done { matches: 1, .. }),
        "{last:?}"
    );
    // Through a link: the files are named by the root's own path.
    let link = top.path().join("link");
    std::os::unix::fs::symlink(&root, &link).unwrap();
    let mut q = query(&root, "first_needle");
    q.path = link.clone().into_os_string().into_encoded_bytes();
    let (by_link, _) = search_pairs(&mut c, 2, q);
    assert_eq!(by_link, found);
    // Made again (renamed into place at once, so that the folder is there
    // again before the watcher's word of its deletion is applied): the old
    // folder's index does not answer.
    let made = top.path().join("made");
    std::fs::create_dir(&made).unwrap();
    std::fs::write(made.join("b.rs"), "fn second_needle() {}\n").unwrap();
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::rename(&made, &root).unwrap();
    for (id, pattern) in [(3, "first_needle"), (4, "second_needle")] {
        let (found, last) = search_pairs(&mut c, id, query(&root, pattern));
        match last {
            // The client is told to scan (the new folder is being indexed).
            Response::Scan { .. } => assert!(found.is_empty()),
            Response::Done { .. } => assert_eq!(found, scan(&root, pattern), "{pattern}"),
            other => panic!("{other:?}"),
        }
    }
}

/// Searches past the bound on those in flight wait their turn for a slot
/// (each connection reads no further request meanwhile) rather than get
/// `busy` at once: sixteen clients, one slot, every search answered. (It
/// failed before: most were answered `busy`.)
#[test]
fn searches_past_the_bound_wait_their_turn() {
    let (srv, t, _indexer) = indexed(Limits {
        searches: 1,
        ..Limits::default()
    });
    let expected = scan(t.path(), "handler_1");
    std::thread::scope(|s| {
        for _ in 0..16 {
            s.spawn(|| {
                let mut c = greppy::client::Client::connect(&srv.socket).unwrap();
                for _ in 0..20 {
                    let a = c.search(query(t.path(), "handler_1")).unwrap();
                    let mut got: Vec<(Vec<u8>, u64)> =
                        a.lines.into_iter().map(|(p, n, _)| (p, n)).collect();
                    got.sort();
                    assert_eq!(got, expected);
                }
            });
        }
    });
}

/// How many times this thread has slept.
fn switches() -> u64 {
    let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("voluntary_ctxt_switches:"))
        .unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// The Rust client sleeps once per answer. Blocked in `recv` on a Unix
/// socket, a reader is also woken each time the other end reads what it
/// sent (which frees room to write): it woke once for nothing per search,
/// which under 64 clients cost the daemon's cores a tenth of its searches
/// a second. It now waits in `poll` for something to read.
#[test]
fn the_client_sleeps_once_per_answer() {
    let (srv, t, _indexer) = indexed(Limits::default());
    let mut c = greppy::client::Client::connect(&srv.socket).unwrap();
    for _ in 0..20 {
        c.search(query(t.path(), "handler_1")).unwrap();
    }
    const SEARCHES: u64 = 400;
    let before = switches();
    for _ in 0..SEARCHES {
        assert!(
            !c.search(query(t.path(), "handler_1"))
                .unwrap()
                .lines
                .is_empty()
        );
    }
    let per = (switches() - before) as f64 / SEARCHES as f64;
    assert!(per < 1.5, "{per:.2} sleeps per search");
}

/// A search of many candidates sends what it has found at the end of a
/// chunk of them only if its last write was `stream_every` ago: a quick
/// one wakes its client once (it woke it once a chunk of 64 files), and
/// one that streams wakes it more often, with the same answer.
#[test]
fn a_quick_search_of_many_files_wakes_its_client_once() {
    let t = tempfile::tempdir().unwrap();
    for i in 0..640 {
        let text = format!("fn handler_{i}() {{ shared_word(); }}\n");
        std::fs::write(t.path().join(format!("f{i:03}.rs")), text).unwrap();
    }
    // Sleeps per search over 20 searches, in up to five tries each: a try
    // on a loaded machine can be off either way (a client that runs late
    // finds several chunks waiting and sleeps less; one preempted sleeps
    // more), so each claim needs one try that shows it.
    for (every, shows) in [
        (
            std::time::Duration::from_secs(3600),
            (|s| s < 1.5) as fn(f64) -> bool,
        ),
        (std::time::Duration::ZERO, |s| s >= 2.0),
    ] {
        let srv = server(Limits {
            stream_every: every,
            ..Limits::default()
        });
        index(&mut Client::hello(&srv.socket), t.path());
        let mut c = greppy::client::Client::connect(&srv.socket).unwrap();
        let q = SearchQuery {
            files: true,
            ..query(t.path(), "shared_word")
        };
        assert_eq!(c.search(q.clone()).unwrap().files.len(), 640);
        const SEARCHES: u64 = 20;
        let mut these = Vec::new();
        for _ in 0..5 {
            let before = switches();
            for _ in 0..SEARCHES {
                assert_eq!(c.search(q.clone()).unwrap().files.len(), 640);
            }
            these.push((switches() - before) as f64 / SEARCHES as f64);
            if shows(*these.last().unwrap()) {
                break;
            }
        }
        assert!(
            these.iter().any(|&s| shows(s)),
            "{these:.2?} sleeps per search, streaming after {every:?}"
        );
    }
}

/// A request that finds no slot free within `slot_wait` is answered
/// `busy`, with its id, and the connection goes on: here the one slot is
/// held by an index build of a few thousand files, far longer than the
/// millisecond a search may wait for it.
#[test]
fn a_request_that_waits_past_its_time_for_a_slot_is_busy() {
    let srv = server(Limits {
        searches: 1,
        slot_wait: std::time::Duration::from_millis(1),
        ..Limits::default()
    });
    let t = tempfile::tempdir().unwrap();
    for i in 0..3000 {
        let text = format!("fn handler_{i}() {{}}\nlet x = {i};\n");
        std::fs::write(t.path().join(format!("f{i}.rs")), text).unwrap();
    }
    let mut c = Client::hello(&srv.socket);
    let path = t.path().to_path_buf().into_os_string().into_encoded_bytes();
    c.send(&Request::Index { id: 1, path });
    c.send(&Request::Search {
        id: 2,
        query: query(t.path(), "handler_7"),
    });
    assert_eq!(c.recv(), Some(Response::Busy { id: Some(2) }));
    assert!(matches!(c.recv(), Some(Response::Indexed { id: 1, .. })));
    // The slot is free again: the same connection's next search is answered.
    c.send(&Request::Search {
        id: 3,
        query: query(t.path(), "handler_2999"),
    });
    let mut lines = Vec::new();
    loop {
        match c.recv() {
            Some(Response::Match { id: 3, line, .. }) => lines.push(line),
            Some(Response::Done { id: 3, .. }) => break,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(lines, [1]);
}

/// A tree where `e` matches every line of 600 files: one search of it
/// answers 300,000 lines, far more than a connection's queue and socket
/// hold; and one file that a selective search finds.
fn broad_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..500).map(|n| format!("the line {n}\n")).collect();
    for i in 0..600 {
        std::fs::write(dir.path().join(format!("f{i:03}.txt")), &text).unwrap();
    }
    std::fs::write(dir.path().join("small.rs"), "fn quiet_needle() {}\n").unwrap();
    dir
}

/// A daemon with a [`broad_tree`] indexed by one client (returned), and
/// another that has sent five searches for `e` and had its first answer.
fn five_broad() -> (Server, tempfile::TempDir, Client, greppy::client::Client) {
    let (s, dir, a, b, _) = five_broad_as(|root| query(root, "e"));
    (s, dir, a, b)
}

/// [`five_broad`], each search asked as `ask` says; with the first answer.
fn five_broad_as(
    ask: impl Fn(&Path) -> SearchQuery,
) -> (
    Server,
    tempfile::TempDir,
    Client,
    greppy::client::Client,
    Response,
) {
    let s = server(Limits::default());
    let dir = broad_tree();
    let mut b = greppy::client::Client::connect(&s.socket).unwrap();
    b.index(dir.path()).unwrap();
    let mut a = Client::hello(&s.socket);
    for id in 1..=5 {
        a.send(&Request::Search {
            id,
            query: ask(dir.path()),
        });
    }
    let first = a.recv().expect("an answer");
    assert!(matches!(
        first,
        Response::Match { .. } | Response::Printed { .. }
    ));
    (s, dir, a, b, first)
}

/// Runs `f` on a thread; its result, or a failure if it takes longer than
/// `secs` seconds.
fn within<R: Send + 'static>(secs: u64, what: &str, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(f()));
    rx.recv_timeout(std::time::Duration::from_secs(secs))
        .unwrap_or_else(|_| panic!("{what} took longer than {secs} s"))
}

#[test]
fn a_client_that_reads_nothing_holds_up_no_one_else() {
    // Its five broad searches fill its queue and wait for it, holding no
    // search thread: another client's selective searches are answered at
    // once. Then it reads, and gets every answer.
    let (_s, dir, mut a, mut b) = five_broad();
    let root = dir.path().to_path_buf();
    within(20, "another client's selective searches", move || {
        for _ in 0..20 {
            let got = b.search(query(&root, "quiet_needle")).unwrap();
            assert_eq!(got.lines.len(), 1);
        }
    });
    let (mut lines, mut done) = (1u64, Vec::new());
    while done.len() < 5 {
        match a.recv().expect("the connection stays open") {
            Response::Match { .. } => lines += 1,
            Response::Done { id, matches, .. } => {
                assert_eq!(matches, 300_001, "search {id}");
                done.push(id);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(lines, 5 * 300_001);
}

/// As [`a_client_that_reads_nothing_holds_up_no_one_else`], for searches
/// answered as rg's printed output (the command line's way of asking):
/// they too wait for their client holding no thread, and lose nothing.
#[test]
fn a_client_that_reads_no_printed_output_holds_up_no_one_else() {
    let printed = |root: &Path| SearchQuery {
        print: Some(protocol::Print {
            output: "lines".into(),
            line_number: true,
            with_path: true,
            ..protocol::Print::default()
        }),
        ..query(root, "e")
    };
    let (_s, dir, mut a, mut b, first) = five_broad_as(printed);
    let root = dir.path().to_path_buf();
    within(20, "another client's selective searches", move || {
        for _ in 0..20 {
            let got = b.search(query(&root, "quiet_needle")).unwrap();
            assert_eq!(got.lines.len(), 1);
        }
    });
    // Every line of the five outputs comes, once the client reads.
    let mut newlines = 0usize;
    let mut done = 0;
    let mut next = Some(first);
    while done < 5 {
        match next
            .take()
            .or_else(|| a.recv())
            .expect("the connection stays open")
        {
            Response::Printed { bytes, .. } => {
                newlines += bytes.iter().filter(|&&c| c == b'\n').count();
            }
            Response::Done { .. } => done += 1,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(newlines, 5 * 300_001);
}

#[test]
fn a_client_that_reads_a_lot_takes_turns_with_the_others() {
    // Its five broad searches run while it reads them; another client's
    // selective search, asked meanwhile, gets its turn at once. First
    // come, first served, it waited for one of the five to end, which the
    // reader sees a moment later (what the daemon had written before that
    // `done`: at most its queue and the socket's buffer).
    let (_s, dir, mut a, mut b) = five_broad();
    let first_done = Arc::new(std::sync::OnceLock::new());
    let seen = first_done.clone();
    let reader = std::thread::spawn(move || {
        let mut done = 0;
        while done < 5 {
            match a.recv().expect("the connection stays open") {
                Response::Match { .. } => {}
                Response::Done { matches, .. } => {
                    assert_eq!(matches, 300_001);
                    let _ = seen.set(std::time::Instant::now());
                    done += 1;
                }
                other => panic!("unexpected {other:?}"),
            }
        }
    });
    let root = dir.path().to_path_buf();
    let asked = std::time::Instant::now();
    let got = within(20, "a selective search", move || {
        b.search(query(&root, "quiet_needle")).unwrap()
    });
    let answered = asked.elapsed();
    assert_eq!(got.lines.len(), 1);
    reader.join().unwrap();
    let broad = first_done
        .get()
        .expect("a broad search was done")
        .duration_since(asked);
    assert!(
        answered * 4 < broad,
        "the selective search took {answered:?}, the first broad one {broad:?}"
    );
}

#[test]
fn one_connection_cannot_take_every_slot() {
    // Two broad searches hold this connection's two slots (its client reads
    // nothing, so they wait for it); its third is `busy`, while another
    // connection still gets one of the daemon's slots. With the daemon's
    // bound alone, the third took a slot as well.
    let s = server(Limits {
        searches: 3,
        per_connection: 2,
        slot_wait: std::time::Duration::from_millis(50),
        ..Limits::default()
    });
    let dir = broad_tree();
    let mut b = greppy::client::Client::connect(&s.socket).unwrap();
    b.index(dir.path()).unwrap();
    let mut a = Client::hello(&s.socket);
    for id in 1..=3 {
        a.send(&Request::Search {
            id,
            query: query(dir.path(), "e"),
        });
    }
    let busy = loop {
        match a.recv().expect("the connection stays open") {
            Response::Match { .. } => {}
            other => break other,
        }
    };
    assert_eq!(busy, Response::Busy { id: Some(3) });
    let root = dir.path().to_path_buf();
    let got = within(20, "another connection's search", move || {
        b.search(query(&root, "quiet_needle")).unwrap()
    });
    assert_eq!(got.lines.len(), 1);
}

/// An editor's walk flags (VS Code passes `--hidden -g '!**/.git'
/// --follow --no-ignore-parent`) are answered from the index and what lies
/// beside it, as rg's walk takes files: hidden names, ignore files'
/// exceptions, changes as they come; a scan only where the tree needs one
/// (a `.git` folder the globs let in, a link to follow, ignore rules
/// above the folder searched).
#[test]
fn an_editors_walk_flags_are_answered_beside_the_index() {
    let s = server(Limits::default());
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let w = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    w(".git/needle.txt", "needle in the repository\n");
    w(".gitignore", "ignored.txt\n!.keep\n");
    w("ignored.txt", "needle\n");
    w(".keep", "needle kept by an exception\n");
    w(".env", "NEEDLE=1\n");
    w(".github/workflows/ci.yml", "needle: ci\n");
    w("src/a.rs", "fn needle() {}\n");
    w("src/.hidden.rs", "fn other() {}\n");
    let mut c = greppy::client::Client::connect(&s.socket).unwrap();
    c.index(&root).unwrap();
    let ask = |hidden: bool, globs: &[&str], path: &Path| SearchQuery {
        files: true,
        candidates: true,
        wait_ms: 30_000,
        ignore_case: true,
        hidden,
        follow: true,
        no_ignore_parent: true,
        globs: globs.iter().map(|g| g.to_string()).collect(),
        cwd: root.as_os_str().as_encoded_bytes().to_vec(),
        ..query(path, "needle")
    };
    let names = |a: &greppy::client::Answer| -> Vec<String> {
        a.files
            .iter()
            .map(|f| {
                let p = Path::new(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(f));
                p.strip_prefix(&root).unwrap().display().to_string()
            })
            .collect()
    };
    let editor = ["!**/.git"];
    let a = c.search(ask(true, &editor, &root)).unwrap();
    assert_eq!(a.scan, None);
    assert_eq!(
        names(&a),
        [".env", ".github/workflows/ci.yml", ".keep", "src/a.rs"]
    );
    let a = c.search(ask(false, &editor, &root)).unwrap();
    assert_eq!(a.scan, None);
    assert_eq!(names(&a), [".keep", "src/a.rs"]);
    // The repository's own folder is not indexed: a glob must leave it out.
    assert!(c.search(ask(true, &[], &root)).unwrap().scan.is_some());
    // Hidden files as they come and go.
    w(".github/new.yml", "needle: new\n");
    w("fresh/.cache/x.txt", "needle cached\n");
    std::fs::remove_file(root.join(".env")).unwrap();
    let a = c.search(ask(true, &editor, &root)).unwrap();
    assert_eq!(
        names(&a),
        [
            ".github/new.yml",
            ".github/workflows/ci.yml",
            ".keep",
            "fresh/.cache/x.txt",
            "src/a.rs"
        ]
    );
    // A link to follow: rg's walk answers.
    std::os::unix::fs::symlink(root.join("src/a.rs"), root.join("src/link.rs")).unwrap();
    assert!(c.search(ask(true, &editor, &root)).unwrap().scan.is_some());
    std::fs::remove_file(root.join("src/link.rs")).unwrap();
    assert_eq!(c.search(ask(true, &editor, &root)).unwrap().scan, None);
    // Below the repository's top, its `.gitignore` is a parent's, which
    // `--no-ignore-parent` drops: rg's walk answers.
    assert!(
        c.search(ask(true, &editor, &root.join("src")))
            .unwrap()
            .scan
            .is_some()
    );
}
