//! The daemon's answers follow the tree: edits, new folders, renames,
//! deletions, ignore files, a branch switch's thousands of files, a restart
//! with changes made meanwhile, a `kill -9` mid-write, a deleted root.

mod common;

use common::Daemon;
use greppy::client::Client;
use greppy::protocol::SearchQuery;
use std::path::{Path, PathBuf};

/// A git work tree of 50 files, in a temporary folder.
fn tree() -> (tempfile::TempDir, PathBuf) {
    let (t, root) = common::repo();
    for i in 0..50 {
        common::write(
            &root,
            &format!("src/f{i}.rs"),
            &format!("fn handler_{i}() {{ retry({i}) }}\n"),
        );
    }
    (t, root)
}

/// The files under `root` with a match, from the daemon, waiting (on the
/// daemon's side) until its answer is fresh.
fn fresh_files(c: &mut Client, root: &Path, pattern: &str) -> Vec<String> {
    let a = c
        .search(SearchQuery {
            pattern: pattern.into(),
            path: root.as_os_str().as_encoded_bytes().to_vec(),
            files: true,
            wait_ms: 30_000,
            ..SearchQuery::default()
        })
        .unwrap();
    assert_eq!(a.scan, None, "answered from the index");
    if !a.fresh {
        let status = c.status();
        panic!("{pattern}: the answer is not fresh; {status:?}");
    }
    let mut v: Vec<String> = a
        .files
        .iter()
        .map(|f| {
            let p = Path::new(std::ffi::OsStr::from_encoded_bytes_unchecked_safe(f));
            p.strip_prefix(root).unwrap().to_string_lossy().into_owned()
        })
        .collect();
    v.sort();
    v
}

/// `OsStr` from bytes on Unix, without `unsafe`.
trait FromBytes {
    fn from_encoded_bytes_unchecked_safe(b: &[u8]) -> &std::ffi::OsStr;
}

impl FromBytes for std::ffi::OsStr {
    fn from_encoded_bytes_unchecked_safe(b: &[u8]) -> &std::ffi::OsStr {
        std::os::unix::ffi::OsStrExt::from_bytes(b)
    }
}

#[test]
fn each_edit_is_in_the_next_answer() {
    let d = Daemon::start();
    let (_t, root) = tree();
    d.index(&root);
    // Through the command line, with no waiting asked for: an edit, then
    // a search, as an agent does it.
    for i in 0..30 {
        let token = format!("fresh_token_{i}_zq");
        std::fs::write(root.join("src/edit.rs"), format!("let x = \"{token}\";\n")).unwrap();
        assert_eq!(d.run(&["-l", &token], &root), "src/edit.rs\n", "edit {i}");
        if i > 0 {
            let old = format!("fresh_token_{}_zq", i - 1);
            assert_eq!(d.run(&["-l", &old], &root), "", "edit {i}: the old text");
        }
    }
    let mut c = Client::connect(&d.socket()).unwrap();
    // A new folder, with a folder in it.
    std::fs::create_dir_all(root.join("new/deeper")).unwrap();
    std::fs::write(root.join("new/deeper/n.rs"), "nested_token_q\n").unwrap();
    assert_eq!(
        fresh_files(&mut c, &root, "nested_token_q"),
        ["new/deeper/n.rs"]
    );
    // Renamed, then the folder removed.
    std::fs::rename(root.join("new/deeper/n.rs"), root.join("new/moved.rs")).unwrap();
    assert_eq!(
        fresh_files(&mut c, &root, "nested_token_q"),
        ["new/moved.rs"]
    );
    std::fs::remove_dir_all(root.join("new")).unwrap();
    assert!(fresh_files(&mut c, &root, "nested_token_q").is_empty());
    // Hidden and ignored places stay out, as in rg.
    std::fs::create_dir_all(root.join(".cache")).unwrap();
    std::fs::write(root.join(".cache/x.rs"), "nested_token_q\n").unwrap();
    assert!(fresh_files(&mut c, &root, "nested_token_q").is_empty());
    // An ignore file changes what is searched (a rebuild).
    std::fs::write(root.join(".gitignore"), "src/edit.rs\n").unwrap();
    assert!(fresh_files(&mut c, &root, "fresh_token_29_zq").is_empty());
    std::fs::remove_file(root.join(".gitignore")).unwrap();
    assert_eq!(
        fresh_files(&mut c, &root, "fresh_token_29_zq"),
        ["src/edit.rs"]
    );
}

/// Each folder is watched on its own: a folder moved keeps being watched
/// under its new name, one moved out of the tree is no longer watched, and
/// one moved in is watched from then on.
#[test]
fn folders_moved_within_out_of_and_into_the_tree_are_followed() {
    let d = Daemon::start();
    let (_t, root) = tree();
    let outside = tempfile::tempdir().unwrap();
    let away = outside.path().canonicalize().unwrap().join("away");
    d.index(&root);
    let mut c = Client::connect(&d.socket()).unwrap();
    let found = |c: &mut Client| fresh_files(c, &root, "moved_token_q");
    std::fs::create_dir_all(root.join("a/inner")).unwrap();
    std::fs::write(root.join("a/inner/x.rs"), "moved_token_q\n").unwrap();
    assert_eq!(found(&mut c), ["a/inner/x.rs"]);
    // Within the tree: found under the new name, and written to there.
    std::fs::rename(root.join("a"), root.join("b")).unwrap();
    assert_eq!(found(&mut c), ["b/inner/x.rs"]);
    std::fs::write(root.join("b/inner/y.rs"), "moved_token_q\n").unwrap();
    assert_eq!(found(&mut c), ["b/inner/x.rs", "b/inner/y.rs"]);
    // A folder made in the moved one, and a file in that at once.
    std::fs::create_dir(root.join("b/inner/deep")).unwrap();
    std::fs::write(root.join("b/inner/deep/w.rs"), "moved_token_q\n").unwrap();
    assert_eq!(
        found(&mut c),
        ["b/inner/deep/w.rs", "b/inner/x.rs", "b/inner/y.rs"]
    );
    // Out of the tree: gone, and what is written there is not in it.
    std::fs::rename(root.join("b"), &away).unwrap();
    assert!(found(&mut c).is_empty());
    std::fs::write(away.join("inner/z.rs"), "moved_token_q\n").unwrap();
    std::fs::write(away.join("inner/x.rs"), "other\n").unwrap();
    assert!(found(&mut c).is_empty());
    // Back in, under another name: found as it is now, and followed.
    std::fs::rename(&away, root.join("c")).unwrap();
    assert_eq!(
        found(&mut c),
        ["c/inner/deep/w.rs", "c/inner/y.rs", "c/inner/z.rs"]
    );
    std::fs::write(root.join("c/inner/deep/w.rs"), "other\n").unwrap();
    std::fs::write(root.join("c/inner/x.rs"), "moved_token_q\n").unwrap();
    assert_eq!(
        found(&mut c),
        ["c/inner/x.rs", "c/inner/y.rs", "c/inner/z.rs"]
    );
}

#[test]
fn a_branch_switch_is_one_batch() {
    let d = Daemon::start();
    let (_t, root) = tree();
    d.index(&root);
    let mut c = Client::connect(&d.socket()).unwrap();
    // 4,500 new files and every old one rewritten, all at once.
    std::fs::create_dir_all(root.join("gen")).unwrap();
    for i in 0..4500 {
        std::fs::write(
            root.join(format!("gen/g{i:04}.rs")),
            format!("switched_branch_token {i}\n"),
        )
        .unwrap();
    }
    for i in 0..50 {
        std::fs::write(root.join(format!("src/f{i}.rs")), "after_switch\n").unwrap();
    }
    assert_eq!(
        fresh_files(&mut c, &root, "switched_branch_token").len(),
        4500
    );
    assert_eq!(fresh_files(&mut c, &root, "after_switch").len(), 50);
    assert!(fresh_files(&mut c, &root, "handler_7").is_empty());
    // Past the merge threshold the changes went into a new index.
    let status = c.status().unwrap();
    assert!(status[0].changes < 4550, "{status:?}");
    assert_eq!(status[0].files, 4550);
}

#[test]
fn a_restart_answers_from_the_saved_index_and_catches_up() {
    let d = Daemon::start();
    let (_t, root) = tree();
    d.index(&root);
    assert!(d.run(&["daemon", "stop"], &root).contains("stopped"));
    // Changes while no daemon runs.
    std::fs::write(root.join("src/f1.rs"), "changed_while_down\n").unwrap();
    std::fs::write(root.join("src/added.rs"), "changed_while_down\n").unwrap();
    std::fs::remove_file(root.join("src/f2.rs")).unwrap();
    d.run(&["daemon", "start"], &root);
    // The first search is answered from the saved index, not a scan.
    let o = d.output(&["-l", "-w", "handler_3"], &root);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "src/f3.rs\n");
    assert!(!String::from_utf8_lossy(&o.stderr).contains("scan"));
    let mut c = Client::connect(&d.socket()).unwrap();
    assert_eq!(
        fresh_files(&mut c, &root, "changed_while_down"),
        ["src/added.rs", "src/f1.rs"]
    );
    assert!(fresh_files(&mut c, &root, "handler_2\\b").is_empty());
    assert!(fresh_files(&mut c, &root, "handler_1\\b").is_empty());
}

#[test]
fn kill_9_during_an_index_write_loses_nothing() {
    let d = Daemon::start();
    let (_t, root) = tree();
    for i in 0..2000 {
        std::fs::write(
            root.join(format!("src/k{i}.rs")),
            format!("kill_token {i}\n"),
        )
        .unwrap();
    }
    d.index(&root);
    for round in 0..3 {
        // A rebuild asked for, and the daemon killed while it runs or
        // while its index is written.
        let mut c = Client::connect(&d.socket()).unwrap();
        let pid = d.pid();
        if round == 0 {
            let id = c.id();
            let path = root.as_os_str().as_encoded_bytes().to_vec();
            c.send(&greppy::protocol::Request::Index { id, path })
                .unwrap();
        } else {
            c.index(&root).unwrap();
        }
        rustix::process::kill_process(
            rustix::process::Pid::from_raw(pid).unwrap(),
            rustix::process::Signal::KILL,
        )
        .unwrap();
        // The socket file is left behind; the next daemon replaces it.
        d.run(&["daemon", "start"], &root);
        let mut c = Client::connect(&d.socket()).unwrap();
        assert_eq!(
            fresh_files(&mut c, &root, "kill_token").len(),
            2000,
            "round {round}"
        );
        let left: Vec<_> = std::fs::read_dir(d.dir.path().join("cache/greppy"))
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "half-written files: {left:?}");
    }
}

#[test]
fn a_deleted_root_is_forgotten_and_can_come_back() {
    let d = Daemon::start();
    let (_t, root) = tree();
    d.index(&root);
    std::fs::remove_dir_all(&root).unwrap();
    // rg's words for a path that is not there.
    let o = d.output(&["x", root.to_str().unwrap()], Path::new("/"));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("No such file"));
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join("back.rs"), "came_back\n").unwrap();
    d.index(&root);
    let mut c = Client::connect(&d.socket()).unwrap();
    assert_eq!(fresh_files(&mut c, &root, "came_back"), ["back.rs"]);
    let roots = c.status().unwrap();
    assert_eq!(roots.len(), 1, "{roots:?}");
}

#[test]
fn an_ignored_folder_named_is_a_root_of_its_own() {
    let d = Daemon::start();
    let (_t, root) = tree();
    std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
    std::fs::create_dir_all(root.join("build/gen")).unwrap();
    std::fs::write(root.join("build/gen/out.rs"), "generated_token\n").unwrap();
    d.index(&root);
    let mut c = Client::connect(&d.socket()).unwrap();
    assert!(fresh_files(&mut c, &root, "generated_token").is_empty());
    // rg searches an ignored folder it is given: so does the index of it.
    d.index(&root.join("build"));
    assert_eq!(
        fresh_files(&mut c, &root.join("build"), "generated_token"),
        ["gen/out.rs"]
    );
    assert_eq!(c.status().unwrap().len(), 2);
    assert_eq!(
        d.run(&["-l", "generated_token", "build"], &root),
        "build/gen/out.rs\n"
    );
}

/// A root the daemon brings back at its start, still being built (its
/// saved index gone), does not take in a folder its walk will not enter:
/// `greppy index build` indexed the whole work tree instead of `build`.
#[test]
fn an_ignored_folder_is_its_own_root_while_its_parent_builds() {
    let d = Daemon::start();
    let (_t, root) = tree();
    // Enough files that the rebuild is still going when `index` asks.
    for i in 0..3000 {
        common::write(
            &root,
            &format!("more/m{i}.rs"),
            &format!("fn more_{i}() {{}}\n"),
        );
    }
    std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
    common::write(&root, "build/gen/out.rs", "generated_token\n");
    d.index(&root);
    assert!(d.run(&["daemon", "stop"], &root).contains("stopped"));
    for f in std::fs::read_dir(d.dir.path().join("cache/greppy")).unwrap() {
        let f = f.unwrap().path();
        if f.extension().is_some_and(|e| e == "idx") {
            std::fs::remove_file(f).unwrap();
        }
    }
    d.run(&["daemon", "start"], &root);
    let said = d.run(&["index", "build"], &root);
    let build = root.join("build");
    assert!(
        said.starts_with(&format!("{}: 1 file,", build.display())),
        "{said}"
    );
    assert_eq!(
        d.run(&["-l", "generated_token", "build"], &root),
        "build/gen/out.rs\n"
    );
}

#[test]
fn stop_then_start_leaves_the_new_daemon_its_socket() {
    // `daemon stop` returns once the old daemon is gone, and an old daemon
    // never removes a socket a new one has bound.
    let d = Daemon::start();
    let (_t, root) = tree();
    d.index(&root);
    for _ in 0..5 {
        d.run(&["daemon", "stop"], &root);
        assert!(
            !d.socket().exists(),
            "the stopped daemon removed its socket"
        );
        d.run(&["daemon", "start"], &root);
        assert!(d.socket().exists());
        let mut c = Client::connect(&d.socket()).unwrap();
        assert_eq!(fresh_files(&mut c, &root, "handler_7\\b"), ["src/f7.rs"]);
    }
}

/// Reading files changes nothing. Readers of the tree (rg, a build, the
/// daemon's own searches) must not queue an event per file they open:
/// 20,000 opens while the daemon cannot read its queue would overflow the
/// kernel's (16,384 by default) and force a rebuild of the whole tree.
#[test]
fn reading_the_tree_is_not_a_change() {
    let d = Daemon::start();
    let (_t, root) = tree();
    d.index(&root);
    let mut c = Client::connect(&d.socket()).unwrap();
    assert_eq!(fresh_files(&mut c, &root, "handler_7"), ["src/f7.rs"]);
    let before = c.status().unwrap();
    let pid = rustix::process::Pid::from_raw(d.pid()).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::STOP).unwrap();
    // Round robin over the files: the kernel merges only an event equal to
    // the one queued just before it.
    for n in 0..20_000 {
        drop(std::fs::File::open(root.join(format!("src/f{}.rs", n % 50))).unwrap());
    }
    rustix::process::kill_process(pid, rustix::process::Signal::CONT).unwrap();
    assert_eq!(fresh_files(&mut c, &root, "handler_8"), ["src/f8.rs"]);
    let after = c.status().unwrap();
    assert_eq!(before.len(), 1);
    assert_eq!(
        before[0].updated_ms, after[0].updated_ms,
        "nothing changed, yet the answers were rebuilt: {after:?}"
    );
}

/// Searches from many connections at once, each after its own edit: an
/// answer that says it is fresh has its edit, whatever the other searches'
/// barriers do meanwhile.
#[test]
fn a_fresh_answer_has_every_earlier_edit_under_concurrent_searches() {
    let d = Daemon::start();
    let (_t, root) = tree();
    d.index(&root);
    let socket = d.socket();
    let threads: Vec<_> = (0..6)
        .map(|t| {
            let (root, socket) = (root.clone(), socket.clone());
            std::thread::spawn(move || {
                let mut c = Client::connect(&socket).unwrap();
                let file = root.join(format!("src/edit{t}.rs"));
                let mut stale = 0;
                for i in 0..150 {
                    let token = format!("concurrent_{t}_{i}_zq");
                    std::fs::write(&file, format!("let x = \"{token}\";\n")).unwrap();
                    let a = c
                        .search(SearchQuery {
                            pattern: token.clone(),
                            path: root.as_os_str().as_encoded_bytes().to_vec(),
                            files: true,
                            ..SearchQuery::default()
                        })
                        .unwrap();
                    if !a.fresh {
                        stale += 1;
                        continue;
                    }
                    assert_eq!(a.files.len(), 1, "{token}: a fresh answer without its edit");
                }
                stale
            })
        })
        .collect();
    let stale: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    // Past its short wait (50 ms) an answer may say it is not fresh, on a
    // loaded machine often; enough must be fresh for the test to hold.
    assert!(stale < 800, "{stale} of 900 answers were not fresh");
}

/// Folders the user cannot read are reported as rg reports them: one
/// inside a tree is an error beside the other answers (status 2); a root
/// that cannot be read is an error; the daemon goes on. Root reads every
/// folder, so as root the daemon, the command line and rg run as `nobody`.
#[test]
fn unreadable_folders_are_errors_as_in_rg() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let as_root = rustix::process::geteuid().is_root();
    let nobody = |c: &mut std::process::Command| {
        if as_root {
            c.uid(65534).gid(65534);
        }
    };
    let (_t, root) = common::repo();
    common::write(&root, "src/a.rs", "let needle_x = 1;\n");
    common::write(&root, "secret/b.rs", "let needle_x = 2;\n");
    let mode = |p: &Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    };
    // The temporary folder (0700) lets others in; its parent is /tmp.
    mode(&root, 0o755);
    mode(&root.join("secret"), 0o000);
    let home = tempfile::tempdir().unwrap();
    mode(home.path(), 0o777);
    // A copy that `nobody` can run wherever the build lives.
    let exe = home.path().join("greppy");
    std::fs::copy(env!("CARGO_BIN_EXE_greppy"), &exe).unwrap();
    mode(&exe, 0o755);
    let greppy = |args: &[&str], cwd: &Path| {
        let mut c = std::process::Command::new(&exe);
        c.env("XDG_RUNTIME_DIR", home.path().join("run"))
            .env("XDG_CACHE_HOME", home.path().join("cache"))
            .env_remove("GREPPY_NO_DAEMON")
            .args(args)
            .current_dir(cwd);
        nobody(&mut c);
        c.output().unwrap()
    };
    let rg = |args: &[&str], cwd: &Path| {
        let mut c = std::process::Command::new("rg");
        c.args(args).current_dir(cwd);
        nobody(&mut c);
        c.output().ok()
    };
    let o = greppy(&["daemon", "start"], &root);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Stopped however the test ends.
    struct OnDrop<F: FnMut()>(F);
    impl<F: FnMut()> Drop for OnDrop<F> {
        fn drop(&mut self) {
            (self.0)();
        }
    }
    let _stop = OnDrop(|| drop(greppy(&["daemon", "stop"], Path::new("/"))));
    let o = greppy(&["index", "."], &root);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Each unreadable part is an error naming it, as rg's; the rest is
    // answered as rg answers it.
    let same_as_rg = |what: &str, named: &str| {
        let got = greppy(&["-n", "needle_x"], &root);
        assert_eq!(got.status.code(), Some(2), "{what}: {got:?}");
        let err = String::from_utf8_lossy(&got.stderr);
        assert!(
            err.contains(named) && err.contains("Permission denied"),
            "{what}: {err}"
        );
        if let Some(want) = rg(&["-n", "needle_x"], &root) {
            assert_eq!(got.stdout, want.stdout, "{what}");
            assert_eq!(got.status.code(), want.status.code(), "{what}");
        }
        String::from_utf8_lossy(&got.stdout).into_owned()
    };
    let one = "src/a.rs:1:let needle_x = 1;\n";
    assert_eq!(same_as_rg("an unreadable folder", "secret"), one);
    // A folder, then a file, unreadable once indexed: the index keeps
    // copies of both files, but answers as rg does, from what it can read.
    mode(&root.join("src"), 0o000);
    assert!(same_as_rg("a folder made unreadable", "src").is_empty());
    mode(&root.join("src"), 0o755);
    mode(&root.join("src/a.rs"), 0o000);
    assert!(same_as_rg("a file made unreadable", "a.rs").is_empty());
    mode(&root.join("src/a.rs"), 0o644);
    assert_eq!(same_as_rg("readable again", "secret"), one);
    // An unreadable folder moved in is an error, as in rg; made readable,
    // its files are found.
    let away = tempfile::tempdir_in(root.parent().unwrap()).unwrap();
    common::write(away.path(), "moved/c.rs", "let needle_x = 3;\n");
    mode(&away.path().join("moved"), 0o000);
    std::fs::rename(away.path().join("moved"), root.join("moved")).unwrap();
    assert_eq!(same_as_rg("an unreadable folder moved in", "moved"), one);
    mode(&root.join("moved"), 0o755);
    let got = greppy(&["-n", "needle_x"], &root);
    assert!(
        String::from_utf8_lossy(&got.stdout).contains("moved/c.rs:1:let needle_x = 3;"),
        "{got:?}"
    );
    // rg prints files in the order its threads finish them.
    let sorted = |b: &[u8]| {
        let mut v: Vec<String> = String::from_utf8_lossy(b)
            .lines()
            .map(String::from)
            .collect();
        v.sort();
        v
    };
    if let Some(want) = rg(&["-n", "needle_x"], &root) {
        assert_eq!(sorted(&got.stdout), sorted(&want.stdout));
    }

    // The root itself, unreadable: an error, nothing found, the daemon up.
    mode(&root.join("secret"), 0o755);
    mode(&root, 0o000);
    let outside = root.parent().unwrap();
    let name = root.file_name().unwrap().to_str().unwrap();
    let got = greppy(&["-n", "needle_x", name], outside);
    assert_eq!(got.status.code(), Some(2), "{got:?}");
    assert!(got.stdout.is_empty());
    let err = String::from_utf8_lossy(&got.stderr);
    assert!(err.contains("Permission denied"), "{err}");
    if let Some(want) = rg(&["-n", "needle_x", name], outside) {
        assert_eq!(got.status.code(), want.status.code());
    }
    mode(&root, 0o755);
    let o = greppy(&["status"], outside);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A build's peak is not kept: after indexing, the daemon holds about its
/// index, not the file entries the build read (glibc kept them before).
#[test]
fn the_daemon_gives_back_what_a_build_used() {
    let d = Daemon::start();
    let (_t, root) = common::repo();
    let mut rng = fastrand::Rng::with_seed(7);
    // Code-like text: words of a vocabulary, as identifiers recur in code.
    let words: Vec<String> = (0..3000)
        .map(|_| (0..rng.usize(4..12)).map(|_| rng.lowercase()).collect())
        .collect();
    let mut source = 0usize;
    for f in 0..600 {
        let mut text = String::new();
        while text.len() < 100_000 {
            let w = |rng: &mut fastrand::Rng| words[rng.usize(..words.len())].as_str();
            let line = format!(
                "    let {} = {}({});\n",
                w(&mut rng),
                w(&mut rng),
                w(&mut rng)
            );
            text.push_str(&line);
        }
        source += text.len();
        common::write(&root, &format!("d{}/f{f}.rs", f % 20), &text);
    }
    d.index(&root);
    let status = std::fs::read_to_string(format!("/proc/{}/status", d.pid())).unwrap();
    let kib = |key: &str| -> usize {
        let line = status.lines().find(|l| l.starts_with(key)).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    let (rss, peak) = (kib("VmRSS:") * 1024, kib("VmHWM:") * 1024);
    let index = Client::connect(&d.socket()).unwrap().status().unwrap()[0].index_bytes as usize;
    // What a daemon holds with no index at all is about 25 MiB; before it
    // gave a build's heap back, 133 MiB here.
    assert!(
        rss < index + (50 << 20),
        "RSS {} MiB after indexing {} MiB into {} MiB (peak {} MiB)",
        rss >> 20,
        source >> 20,
        index >> 20,
        peak >> 20
    );
}

/// Each tree costs what it holds: an empty one next to nothing (each took
/// 4.6 MiB before, all for an event queue allocated and touched up front).
#[test]
fn an_empty_tree_costs_next_to_no_memory() {
    let d = Daemon::start();
    let trees: Vec<tempfile::TempDir> = (0..8).map(|_| tempfile::tempdir().unwrap()).collect();
    // The first brings up the threads every tree shares.
    d.index(trees[0].path());
    let rss = || -> usize {
        let status = std::fs::read_to_string(format!("/proc/{}/status", d.pid())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    let before = rss();
    for t in &trees[1..] {
        d.index(t.path());
    }
    let grown = rss().saturating_sub(before);
    assert!(grown < 7 * 1024, "7 empty trees took {grown} KiB");
}
