//! Redirections: applied for a command and undone after it, or for good
//! (`exec`), here-documents and `{var}>file`.

use super::{Exec, Flow, Saved, Shell, errno_text};
use crate::ast::{RedirOp, RedirTarget, Redirect, Word};
use crate::sys;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

impl Shell {
    /// Applies redirections, saving what they replace. On failure, reports
    /// it, undoes what was done, and returns the status (1).
    #[inline]
    pub fn redirect(&mut self, redirects: &[Redirect]) -> Result<Saved, i32> {
        if redirects.is_empty() {
            return Ok(Saved::default());
        }
        self.redirect_all(redirects)
    }

    pub(super) fn redirect_all(&mut self, redirects: &[Redirect]) -> Result<Saved, i32> {
        self.redirect_flow = None;
        let mut saved = Saved::default();
        for r in redirects {
            if let Err(msg) = self.redirect_one(r, &mut saved) {
                if let Some(msg) = msg {
                    self.error(&msg);
                }
                self.restore(saved);
                return Err(1);
            }
        }
        Ok(saved)
    }

    pub(super) fn save(&mut self, fd: RawFd, saved: &mut Saved) {
        if saved.fds.iter().any(|(f, _)| *f == fd) {
            return;
        }
        let copy = sys::save_fd(fd).ok().flatten();
        saved.fds.push((fd, copy));
    }

    /// Keeps redirections in effect for good (`exec >file`).
    pub(super) fn forget(&mut self, saved: Saved) {
        for (_, copy) in saved.fds {
            if let Some(c) = copy {
                sys::close(c);
            }
        }
    }

    /// Undoes redirections, newest first.
    #[inline]
    pub fn restore(&mut self, saved: Saved) {
        if saved.fds.is_empty() {
            return;
        }
        self.restore_fds(saved);
    }

    pub(super) fn restore_fds(&mut self, saved: Saved) {
        for (fd, copy) in saved.fds.into_iter().rev() {
            match copy {
                Some(c) => {
                    let _ = sys::dup2(c, fd);
                    sys::close(c);
                }
                None => sys::close(fd),
            }
        }
    }

    pub(super) fn redirect_one(
        &mut self,
        r: &Redirect,
        saved: &mut Saved,
    ) -> Result<(), Option<String>> {
        if let Some(name) = &r.var {
            return self.redirect_to_var(r, name, saved);
        }
        let fd = r.fd.unwrap_or_else(|| r.op.default_fd());
        if !(0..sys::FIRST_PRIVATE_FD * 100).contains(&fd) {
            return Err(Some(format!("{fd}: Bad file descriptor")));
        }
        let target = match &r.target {
            // A here-string's word is one string, as an assignment's is:
            // no brace expansion, no splitting, no globbing.
            RedirTarget::Word(w) if r.op == RedirOp::HereString => {
                self.expand_string(w).map_err(|f| {
                    self.redirect_flow = Some(f);
                    None
                })?
            }
            RedirTarget::Word(w) => self.expand_redirect_target(w)?,
            RedirTarget::HereDoc(doc) => {
                let body = match doc.body.get() {
                    Some(w) => self.expand_heredoc(w).map_err(|_| None)?,
                    None => Vec::new(),
                };
                let file = here_fd(&body).map_err(|e| Some(format!("here-document: {e}")))?;
                self.save(fd, saved);
                let _ = sys::dup2(file.as_raw_fd(), fd);
                return Ok(());
            }
        };
        let shown = || String::from_utf8_lossy(&target).into_owned();
        // A restricted shell writes no files (bash).
        if self.opts.restricted
            && matches!(
                r.op,
                RedirOp::Out
                    | RedirOp::Clobber
                    | RedirOp::Append
                    | RedirOp::ReadWrite
                    | RedirOp::OutErr
                    | RedirOp::AppendOutErr
            )
        {
            return Err(Some(format!(
                "{}: restricted: cannot redirect output",
                shown()
            )));
        }
        let open = |flags: rustix::fs::OFlags| -> Result<OwnedFd, Option<String>> {
            let path = std::ffi::OsStr::from_bytes(&target);
            rustix::fs::open(
                path,
                flags | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::from(0o666),
            )
            .map_err(|e| Some(format!("{}: {}", shown(), errno_text(e))))
        };
        use rustix::fs::OFlags as O;
        // Saved first: if `fd` is closed now, the open below may land on it.
        self.save(fd, saved);
        let file = match r.op {
            RedirOp::In => open(O::RDONLY)?,
            RedirOp::Out | RedirOp::OutErr if self.opts.noclobber => {
                match open(O::WRONLY | O::CREATE | O::EXCL) {
                    Ok(f) => f,
                    Err(e) => {
                        // Existing non-regular files (like /dev/null) are fine.
                        let p = std::ffi::OsStr::from_bytes(&target);
                        match std::fs::metadata(p) {
                            Ok(m) if !m.is_file() => open(O::WRONLY)?,
                            Ok(_) => {
                                return Err(Some(format!(
                                    "{}: cannot overwrite existing file",
                                    shown()
                                )));
                            }
                            Err(_) => return Err(e),
                        }
                    }
                }
            }
            RedirOp::Out | RedirOp::Clobber | RedirOp::OutErr => {
                open(O::WRONLY | O::CREATE | O::TRUNC)?
            }
            RedirOp::Append | RedirOp::AppendOutErr => open(O::WRONLY | O::CREATE | O::APPEND)?,
            RedirOp::ReadWrite => open(O::RDWR | O::CREATE)?,
            RedirOp::HereString => {
                let mut body = target.clone();
                body.push(b'\n');
                here_fd(&body).map_err(|e| Some(format!("here-string: {e}")))?
            }
            RedirOp::DupIn | RedirOp::DupOut => {
                if target == b"-" {
                    self.save(fd, saved);
                    sys::close(fd);
                    self.coproc_end_closed(fd);
                    return Ok(());
                }
                let (num, close_src) = match target.strip_suffix(b"-") {
                    Some(n) => (n, true),
                    None => (target.as_slice(), false),
                };
                let Some(src) = std::str::from_utf8(num)
                    .ok()
                    .and_then(|s| s.parse::<RawFd>().ok())
                else {
                    if r.op == RedirOp::DupOut && r.fd.is_none() {
                        // `>& file` (bash): stdout and stderr to a file.
                        if self.opts.restricted {
                            return Err(Some(format!(
                                "{}: restricted: cannot redirect output",
                                shown()
                            )));
                        }
                        let f = open(O::WRONLY | O::CREATE | O::TRUNC)?;
                        self.save(1, saved);
                        self.save(2, saved);
                        let _ = sys::dup2(f.as_raw_fd(), 1);
                        let _ = sys::dup2(f.as_raw_fd(), 2);
                        return Ok(());
                    }
                    let written = match &r.target {
                        RedirTarget::Word(w) => crate::unparse::word(w),
                        RedirTarget::HereDoc(_) => target.clone(),
                    };
                    return Err(Some(format!(
                        "{}: ambiguous redirect",
                        String::from_utf8_lossy(&written)
                    )));
                };
                if src == fd {
                    return Ok(());
                }
                if !sys::is_open(src) || src >= sys::FIRST_PRIVATE_FD && saved_copy(saved, src) {
                    // bash names the word as written (`$fd: Bad file
                    // descriptor`).
                    let written = match &r.target {
                        RedirTarget::Word(w) => {
                            String::from_utf8_lossy(&crate::unparse::word(w)).into_owned()
                        }
                        RedirTarget::HereDoc(_) => src.to_string(),
                    };
                    return Err(Some(format!("{written}: Bad file descriptor")));
                }
                self.save(fd, saved);
                if let Err(e) = sys::dup2(src, fd) {
                    return Err(Some(format!("{src}: {e}")));
                }
                if close_src {
                    self.save(src, saved);
                    sys::close(src);
                    self.coproc_end_closed(src);
                }
                return Ok(());
            }
            RedirOp::HereDoc => unreachable!("handled above"),
        };
        if matches!(r.op, RedirOp::OutErr | RedirOp::AppendOutErr) {
            self.save(2, saved);
            let _ = sys::dup2(file.as_raw_fd(), 2);
        }
        if file.as_raw_fd() == fd {
            // Opened right where it belongs: keep it, inheritable.
            let raw = std::os::fd::IntoRawFd::into_raw_fd(file);
            let _ = sys::dup2(raw, raw);
        } else if let Err(e) = sys::dup2(file.as_raw_fd(), fd) {
            return Err(Some(format!("{fd}: {e}")));
        }
        Ok(())
    }

    /// `{name}>file` (bash): the redirection made on the lowest free fd
    /// from 10, which stays open after the command, its number assigned to
    /// `name`; `{name}>&-` closes the fd `name` holds.
    pub(super) fn redirect_to_var(
        &mut self,
        r: &Redirect,
        name: &[u8],
        saved: &mut Saved,
    ) -> Result<(), Option<String>> {
        let shown = String::from_utf8_lossy(name).into_owned();
        let closing = matches!(r.op, RedirOp::DupIn | RedirOp::DupOut)
            && matches!(&r.target, RedirTarget::Word(w) if w.as_plain() == Some(b"-"));
        let plain = Redirect {
            fd: None,
            op: r.op,
            target: r.target.clone(),
            var: None,
        };
        if closing {
            let fd = self
                .vars
                .get(name)
                .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse::<RawFd>().ok())
                .ok_or_else(|| Some(format!("{shown}: ambiguous redirect")))?;
            sys::close(fd);
            return Ok(());
        }
        let mut fd = sys::FIRST_PRIVATE_FD;
        while sys::is_open(fd) || saved.fds.iter().any(|(_, c)| *c == Some(fd)) {
            fd += 1;
        }
        let mut here = Saved::default();
        let r = self.redirect_one(
            &Redirect {
                fd: Some(fd),
                ..plain
            },
            &mut here,
        );
        // The new fd outlives the command: nothing of it is restored.
        saved
            .fds
            .extend(here.fds.into_iter().filter(|(f, _)| *f != fd));
        r?;
        if let Err(e) = self.vars.set(name, fd.to_string().into_bytes()) {
            sys::close(fd);
            self.error(&e.to_string());
            return Err(Some(format!("{shown}: cannot assign fd to variable")));
        }
        Ok(())
    }

    pub(super) fn expand_redirect_target(&mut self, w: &Word) -> Result<Vec<u8>, Option<String>> {
        // A non-interactive shell in POSIX mode does not glob the word.
        let noglob = self.opts.noglob;
        self.opts.noglob |= self.opts.posix && !self.opts.interactive;
        let fields = self.expand_words(std::slice::from_ref(w));
        self.opts.noglob = noglob;
        let fields = fields.map_err(|f| {
            self.redirect_flow = Some(f);
            None
        })?;
        match fields.as_slice() {
            [one] => Ok(one.clone()),
            // bash names the word as written (`$x: ambiguous redirect`).
            _ => Err(Some(format!(
                "{}: ambiguous redirect",
                String::from_utf8_lossy(&crate::unparse::word(w))
            ))),
        }
    }
}

/// Whether one of `redirects` replaces standard input.
pub(super) fn reads_stdin(redirects: &[Redirect]) -> bool {
    redirects
        .iter()
        .any(|r| r.fd.unwrap_or_else(|| r.op.default_fd()) == 0)
}

/// What a loop does after running part of itself.
pub(super) enum Step {
    Done(i32),
    Break,
    Continue,
    /// Leave this loop too (an outer `break N`, `return`, `exit`).
    Leave(Flow),
}

pub(super) fn step(r: Exec) -> Step {
    match r {
        Ok(s) => Step::Done(s),
        Err(Flow::Break(1)) => Step::Break,
        Err(Flow::Break(n)) => Step::Leave(Flow::Break(n - 1)),
        Err(Flow::Continue(1)) => Step::Continue,
        Err(Flow::Continue(n)) => Step::Leave(Flow::Continue(n - 1)),
        Err(f) => Step::Leave(f),
    }
}

pub(super) fn saved_copy(saved: &Saved, fd: RawFd) -> bool {
    saved.fds.iter().any(|(_, c)| *c == Some(fd))
}

/// A readable fd holding `body`: a pipe when it fits in the pipe buffer,
/// otherwise an anonymous file.
pub(super) fn here_fd(body: &[u8]) -> io::Result<OwnedFd> {
    const PIPE_CAPACITY: usize = 65536;
    if body.len() < PIPE_CAPACITY {
        let (r, w) = sys::pipe()?;
        sys::write_all(w.as_raw_fd(), body)?;
        drop(w);
        return sys::to_private(r);
    }
    let f = rustix::fs::memfd_create("rush-heredoc", rustix::fs::MemfdFlags::CLOEXEC)?;
    sys::write_all(f.as_raw_fd(), body)?;
    rustix::fs::seek(&f, rustix::fs::SeekFrom::Start(0))?;
    sys::to_private(f)
}
