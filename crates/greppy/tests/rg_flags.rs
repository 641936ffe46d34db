//! rg 15 flags that the PATH's rg (Debian's 13.0, which `rg_equivalence`
//! compares with) lacks: greppy's output asserted against what rg 15.2.0
//! printed for the same command line.

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
