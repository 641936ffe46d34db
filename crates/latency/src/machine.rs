//! Facts about the machine that every report states: CPU count and model,
//! kernel, and the filesystem a path lives on.

use std::path::Path;

/// The number of CPUs this process may run on.
pub fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The CPU model name from `/proc/cpuinfo`, if there is one.
pub fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|rest| rest.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
}

/// `uname -sr`, e.g. `Linux 6.1.0-18-amd64`.
pub fn kernel() -> String {
    // SAFETY: all-zero is a valid `utsname` (byte arrays).
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a live, writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return "unknown".into();
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    format!("{} {}", field(&u.sysname), field(&u.release))
}

/// The name of the filesystem that holds `path` (`tmpfs`, `ext4`, `xfs`, …),
/// from `statfs`'s magic number; `unknown(0x…)` for others.
pub fn fs_type(path: &Path) -> std::io::Result<String> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: all-zero is a valid `statfs` (integers).
    let mut s: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is NUL-terminated and `s` is a live, writable statfs.
    if unsafe { libc::statfs(c.as_ptr(), &mut s) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    #[allow(clippy::unnecessary_cast)] // f_type's width differs between targets
    let magic = s.f_type as u64;
    Ok(match magic {
        0x0102_1994 => "tmpfs",
        0xEF53 => "ext4",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        0x794C_7630 => "overlayfs",
        0x6969 => "nfs",
        0x0102_1997 => "9p",
        0x6573_5546 => "fuse",
        0x2FC1_2FC1 => "zfs",
        _ => return Ok(format!("unknown({magic:#x})")),
    }
    .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_are_read() {
        assert!(cpus() >= 1);
        assert!(kernel().starts_with("Linux "), "{}", kernel());
        assert_eq!(fs_type(Path::new("/dev/shm")).unwrap(), "tmpfs");
        assert!(fs_type(Path::new("/nonexistent/path")).is_err());
    }
}
