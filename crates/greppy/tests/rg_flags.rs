//! rg 15 flags that the PATH's rg (Debian's 13.0, which `rg_equivalence`
//! compares with) lacks: greppy's output asserted against what rg 15.2.0
//! printed for the same command line.

use std::path::Path;
use std::process::Command;

#[test]
fn hostname_bin_names_the_host_in_hyperlinks() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("a.txt"), "needle\n").unwrap();
    let host = root.join("host.sh");
    std::fs::write(&host, "#!/bin/sh\necho buildhost\n").unwrap();
    std::fs::set_permissions(&host, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_greppy"))
        .args([
            "--color",
            "always",
            "--hyperlink-format",
            "file://{host}{path}",
        ])
        .arg("--hostname-bin")
        .arg(&host)
        .args(["-l", "needle", "a.txt"])
        .current_dir(&root)
        .env("GREPPY_NO_DAEMON", "1")
        .output()
        .unwrap();
    let path = root.join("a.txt");
    // rg 15.2.0's bytes for the same command line.
    let want = format!(
        "\x1b]8;;file://buildhost{}\x1b\\\x1b[0m\x1b[35ma.txt\x1b[0m\x1b]8;;\x1b\\\n",
        path.display()
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), want);
    assert!(out.status.success());
}

#[test]
fn no_invert_match_undoes_invert_match() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "one needle\ntwo\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_greppy"))
        .args(["-v", "--no-invert-match", "-n", "needle", "a.txt"])
        .current_dir(dir.path())
        .env("GREPPY_NO_DAEMON", "1")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1:one needle\n");
}

/// `--generate`: shell completions and a man page for the flags, under the
/// name the program runs as; an unknown kind is rg's usage error.
#[test]
fn generate_makes_completions_and_a_man_page() {
    let dir = tempfile::tempdir().unwrap();
    let rg = dir.path().join("rg");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_greppy"), &rg).unwrap();
    let run = |bin: &std::path::Path, kind: &str| {
        Command::new(bin)
            .args(["--generate", kind])
            .env("GREPPY_NO_DAEMON", "1")
            .output()
            .unwrap()
    };
    let bash = run(&rg, "complete-bash");
    assert!(bash.status.success());
    let text = String::from_utf8_lossy(&bash.stdout);
    assert!(text.contains("complete -F _rg"), "{text}");
    assert!(text.contains("--max-columns") && text.contains("--no-ignore-parent"));
    for kind in ["complete-zsh", "complete-fish", "complete-powershell"] {
        let o = run(&rg, kind);
        assert!(o.status.success() && o.stdout.len() > 1000, "{kind}");
    }
    let man = run(Path::new(env!("CARGO_BIN_EXE_greppy")), "man");
    assert!(man.status.success());
    let text = String::from_utf8_lossy(&man.stdout);
    assert!(
        text.starts_with(".ie") || text.contains(".TH greppy"),
        "{text}"
    );
    assert!(text.contains("max\\-columns"), "{text}");
    let bad = run(&rg, "complete-tcsh");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("complete-tcsh"));
}
