//! Where commands come from: a script on stdin, read a line at a time so
//! that commands run before the rest is read (and `read` in the script sees
//! the lines after it).

use crate::parse::Source;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};

/// `set -v`: echo input lines to stderr as they are read.
pub static VERBOSE: AtomicBool = AtomicBool::new(false);

/// Reads lines from an fd. On a seekable fd (a file) it reads in blocks and
/// seeks back to the end of the line it returns, so the fd's offset is always
/// just past the text parsed; on a pipe or terminal it reads a byte at a time,
/// which is the only way not to take input that belongs to the commands.
#[derive(Debug)]
pub struct FdLines {
    fd: RawFd,
    seekable: bool,
}

impl FdLines {
    pub fn new(fd: RawFd) -> Self {
        // SAFETY: lseek on an fd number only queries its offset.
        let seekable = unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) } >= 0;
        FdLines { fd, seekable }
    }

    fn read(&self, buf: &mut [u8]) -> isize {
        loop {
            // SAFETY: reading into a valid buffer of the given length.
            let n = unsafe { libc::read(self.fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return n;
        }
    }
}

impl Source for FdLines {
    fn next_line(&mut self, out: &mut Vec<u8>) -> bool {
        let start = out.len();
        if self.seekable {
            let mut block = [0u8; 4096];
            loop {
                let n = self.read(&mut block);
                if n <= 0 {
                    break;
                }
                let got = &block[..n as usize];
                if let Some(nl) = got.iter().position(|&c| c == b'\n') {
                    out.extend_from_slice(&got[..=nl]);
                    let back = (got.len() - nl - 1) as libc::off_t;
                    // SAFETY: moving this fd's offset back over what we did
                    // not use.
                    unsafe { libc::lseek(self.fd, -back, libc::SEEK_CUR) };
                    break;
                }
                out.extend_from_slice(got);
            }
        } else {
            let mut byte = [0u8; 1];
            loop {
                if self.read(&mut byte) <= 0 {
                    break;
                }
                out.push(byte[0]);
                if byte[0] == b'\n' {
                    break;
                }
            }
        }
        if VERBOSE.load(Ordering::Relaxed) && out.len() > start {
            let _ = crate::sys::write_all(2, &out[start..]);
        }
        out.len() > start
    }
}
