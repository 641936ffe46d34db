//! Counting, messages and the progress display.
//!
//! Errors go to stderr as they happen, naming the path and the reason.
//! `--verbose` lines go to stdout (in a dry run too: `would remove …`); under
//! `--json` there are none, as stdout is the document's and stderr carries
//! only errors. The progress display is drawn by its own thread, only on a
//! terminal (or everywhere with `--progress=always`), only once the run has
//! taken noticeable time, at most 10 times a second; it stops the moment the
//! run ends, with a last line of final totals.

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// When the progress display appears, unless `FAST_RM_PROGRESS_DELAY_MS`
/// says otherwise (for tests).
const PROGRESS_DELAY: Duration = Duration::from_millis(300);
/// How often it redraws.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// Whether to draw progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProgressMode {
    /// On a terminal only.
    Auto,
    Always,
    Never,
}

/// One failure, for the summary.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    pub path: String,
    pub error: String,
}

/// What a run did.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub dry_run: bool,
    /// Non-directories removed (or, in a dry run, that would be).
    pub files: u64,
    pub dirs: u64,
    /// Not known: entries are never stat'ed.
    pub bytes: Option<u64>,
    pub errors: u64,
    pub failures: Vec<Failure>,
    pub elapsed_ms: f64,
    pub ok: bool,
}

/// Shared by every thread of a run.
#[derive(Debug)]
pub struct Reporter {
    verbose: bool,
    dry_run: bool,
    json: bool,
    stats: Arc<Stats>,
    failures: Mutex<Vec<Failure>>,
    started: Instant,
    progress: ProgressMode,
    progress_delay: Duration,
    progress_started: AtomicBool,
    bar: Mutex<Option<ProgressBar>>,
    stop: Mutex<Option<(Sender<()>, std::thread::JoinHandle<()>)>>,
}

/// How many failures the summary keeps by name.
const MAX_FAILURES_KEPT: usize = 1000;

impl Reporter {
    pub fn new(verbose: bool, dry_run: bool, json: bool, progress: ProgressMode) -> Self {
        Self {
            verbose,
            dry_run,
            json,
            stats: Arc::new(Stats::default()),
            failures: Mutex::new(Vec::new()),
            started: Instant::now(),
            progress,
            progress_delay: std::env::var("FAST_RM_PROGRESS_DELAY_MS")
                .ok()
                .and_then(|v| v.parse().ok())
                .map_or(PROGRESS_DELAY, Duration::from_millis),
            progress_started: AtomicBool::new(false),
            bar: Mutex::new(None),
            stop: Mutex::new(None),
        }
    }

    /// A line on stderr, above the progress display if it is drawn.
    pub fn message(&self, line: &str) {
        let bar = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        match bar.as_ref() {
            Some(b) => b.suspend(|| say(&format!("{line}\n"))),
            None => say(&format!("{line}\n")),
        }
    }

    fn line_out(&self, line: &str) {
        let bar = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        let print = || {
            let mut out = io::stdout().lock();
            let _ = writeln!(out, "{line}");
        };
        match bar.as_ref() {
            Some(b) => b.suspend(print),
            None => print(),
        }
    }

    /// Asks `question` on stderr and reads the answer from stdin: true for an
    /// answer that means yes in the locale ([`affirmative`]). One question at a time; the progress
    /// display (and every other line) waits until it is answered.
    pub fn ask(&self, question: &str) -> bool {
        let bar = self.bar.lock().unwrap_or_else(|e| e.into_inner());
        match bar.as_ref() {
            Some(b) => b.suspend(|| ask_alone(question)),
            None => ask_alone(question),
        }
    }

    /// `path` could not be removed because of `err`.
    pub fn error(&self, path: &Path, err: io::Error) {
        self.fail(
            path,
            format!("cannot remove {}: {}", quote(path), describe(&err)),
        );
    }

    pub fn skip_other_device(&self, path: &Path) {
        self.fail(
            path,
            format!("skipping {}, since it's on a different device", quote(path)),
        );
    }

    /// A failure with a message of its own.
    pub fn fail(&self, path: &Path, message: String) {
        self.stats.errors.fetch_add(1, Ordering::Relaxed);
        self.message(&format!("{}: {message}", program()));
        let mut f = self.failures.lock().unwrap_or_else(|e| e.into_inner());
        if f.len() < MAX_FAILURES_KEPT {
            f.push(Failure {
                path: path.to_string_lossy().into_owned(),
                error: message,
            });
        }
    }

    /// A directory was removed (or would be, in a dry run); files are
    /// counted in bulk by [`files_removed`](Self::files_removed).
    pub fn dir_removed(&self, path: impl FnOnce() -> PathBuf) {
        self.stats.dirs.fetch_add(1, Ordering::Relaxed);
        self.listed(true, path);
    }

    /// `n` files were removed (or would be), already [`listed`](Self::listed)
    /// one by one. The engine counts each directory's files on its own
    /// thread and adds them here once: one shared counter bumped for every
    /// file had the threads bouncing its cache line between them.
    pub fn files_removed(&self, n: u64) {
        if n > 0 {
            self.stats.files.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// The line `-v` prints for a removal (rm's wording); counts nothing.
    pub fn listed(&self, is_dir: bool, path: impl FnOnce() -> PathBuf) {
        // The listing is asked for with -v (as rm's), in a dry run too; under
        // --json, stdout is the document's and stderr only errors'.
        if self.verbose && !self.json {
            let p = path();
            let what = if is_dir { "directory " } else { "" };
            let verb = if self.dry_run {
                "would remove"
            } else {
                "removed"
            };
            self.line_out(&format!("{verb} {what}{}", quote(&p)));
        }
    }

    /// Called once per directory: starts the progress display once the run
    /// has taken noticeable time.
    pub fn tick_dir(&self) {
        if self.progress == ProgressMode::Never
            || self.progress_started.load(Ordering::Relaxed)
            || self.started.elapsed() < self.progress_delay
        {
            return;
        }
        if self.progress_started.swap(true, Ordering::AcqRel) {
            return;
        }
        self.start_progress();
    }

    fn start_progress(&self) {
        use std::io::IsTerminal;
        let tty = io::stderr().is_terminal();
        if self.progress == ProgressMode::Auto && !tty {
            return;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(10));
        bar.set_style(
            ProgressStyle::with_template("{spinner} {elapsed} {msg}").expect("constant template"),
        );
        *self.bar.lock().unwrap_or_else(|e| e.into_inner()) = Some(bar.clone());
        let (tx, rx) = crossbeam_channel::bounded::<()>(1);
        let view = View {
            bar,
            tty,
            started: self.started,
            dry_run: self.dry_run,
        };
        let stats = self.stats.clone();
        let handle = std::thread::Builder::new()
            .name("fast-rm-progress".into())
            .spawn(move || view.run(&rx, &stats));
        if let Ok(h) = handle {
            *self.stop.lock().unwrap_or_else(|e| e.into_inner()) = Some((tx, h));
        }
    }

    /// Ends the progress display and returns the summary.
    pub fn finish(&self) -> Summary {
        if let Some((tx, h)) = self.stop.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = tx.send(());
            let _ = h.join();
        }
        // The closing line: the final totals, whenever progress was shown
        // (the last periodic line is older than the end), and always with
        // --progress=always.
        let last = progress_line(&self.stats, self.started, self.dry_run, true);
        let bar = self.bar.lock().unwrap_or_else(|e| e.into_inner()).take();
        let tty = || {
            use std::io::IsTerminal;
            io::stderr().is_terminal()
        };
        match bar {
            Some(b) if tty() => b.finish_with_message(last),
            // Off a terminal only `always` draws (a plain line a second).
            _ if self.progress == ProgressMode::Always => say(&format!("{}: {last}\n", program())),
            _ => {}
        }
        let errors = self.stats.errors.load(Ordering::Relaxed);
        Summary {
            dry_run: self.dry_run,
            files: self.stats.files.load(Ordering::Relaxed),
            dirs: self.stats.dirs.load(Ordering::Relaxed),
            bytes: None,
            errors,
            failures: std::mem::take(&mut *self.failures.lock().unwrap_or_else(|e| e.into_inner())),
            elapsed_ms: self.started.elapsed().as_secs_f64() * 1e3,
            ok: errors == 0,
        }
    }
}

/// Writes `text` to stderr in one system call, as GNU rm's `fprintf` does:
/// Asks `question` on stderr and reads a line from stdin: whether it is
/// yes ([`affirmative`]). The end of input, or an error, is no.
pub fn ask_alone(question: &str) -> bool {
    use std::io::BufRead;
    say(&format!("{}: {question} ", program()));
    let mut answer = Vec::new();
    match io::stdin().lock().read_until(b'\n', &mut answer) {
        Ok(n) if n > 0 => {
            if answer.last() == Some(&b'\n') {
                answer.pop();
            }
            affirmative(&answer)
        }
        _ => false,
    }
}

/// Takes the locale from the environment, as rm does: the answers to
/// prompts are the locale's yes and no. Called only where a question may
/// come, once or twice, before the engine starts any thread.
pub fn use_locale() {
    // SAFETY: no other thread runs yet (see above); the argument is a
    // NUL-terminated empty string, which asks for the environment's locale.
    unsafe {
        libc::setlocale(libc::LC_ALL, c"".as_ptr());
    }
}

unsafe extern "C" {
    /// glibc's: 1 if the response matches the locale's YESEXPR, 0 if its
    /// NOEXPR, -1 otherwise.
    fn rpmatch(response: *const std::ffi::c_char) -> std::ffi::c_int;
}

/// Whether an answer (a line without its newline) is yes, as rm's `yesno`
/// decides it: glibc's `rpmatch` with the locale's expressions (in the C
/// locale, a first `y` or `Y`). Anything that is neither yes nor no is no.
pub fn affirmative(answer: &[u8]) -> bool {
    let Ok(c) = std::ffi::CString::new(answer) else {
        return false;
    };
    // SAFETY: `c` is NUL-terminated and outlives the call, which only
    // reads it.
    unsafe { rpmatch(c.as_ptr()) > 0 }
}

/// The name messages begin with: the name the program was invoked under
/// (`rm` when installed as rm), `fast-rm` until it is set.
static PROGRAM: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Sets the name messages begin with (once; later calls change nothing).
pub fn set_program(name: &str) {
    let _ = PROGRAM.set(name.to_string());
}

/// The name messages begin with.
pub fn program() -> &'static str {
    PROGRAM.get().map_or("fast-rm", String::as_str)
}

/// `eprint!` writes each piece of its format on its own, and a terminal's
/// echo of an answer typed ahead, or another process's line, lands between
/// them. Errors writing to stderr are ignored, as there is nowhere to report
/// them.
pub fn say(text: &str) {
    let _ = io::stderr().lock().write_all(text.as_bytes());
}

/// The counters, shared with the progress thread.
#[derive(Debug, Default)]
struct Stats {
    files: AtomicU64,
    dirs: AtomicU64,
    errors: AtomicU64,
}

struct View {
    bar: ProgressBar,
    tty: bool,
    started: Instant,
    dry_run: bool,
}

impl View {
    /// Redraws every `PROGRESS_EVERY` until told to stop: the wait is on the
    /// stop channel, so the end of the run ends it at once.
    fn run(self, stop: &Receiver<()>, stats: &Stats) {
        let mut last_plain: Option<Instant> = None;
        loop {
            let msg = progress_line(stats, self.started, self.dry_run, false);
            if self.tty {
                self.bar.set_message(msg);
                self.bar.tick();
            } else if last_plain.is_none_or(|t| t.elapsed() >= Duration::from_secs(1)) {
                // --progress=always off a terminal: a plain line a second.
                say(&format!("{}: {msg}\n", program()));
                last_plain = Some(Instant::now());
            }
            match stop.recv_timeout(PROGRESS_EVERY) {
                Err(RecvTimeoutError::Timeout) => {}
                Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    }
}

/// A progress line: the counts so far, or (`done`) the final totals.
fn progress_line(stats: &Stats, started: Instant, dry_run: bool, done: bool) -> String {
    let files = stats.files.load(Ordering::Relaxed);
    let dirs = stats.dirs.load(Ordering::Relaxed);
    let errors = stats.errors.load(Ordering::Relaxed);
    let secs = started.elapsed().as_secs_f64().max(1e-3);
    let verb = match (dry_run, done) {
        (true, false) => "found",
        (true, true) => "would remove",
        (false, _) => "removed",
    };
    let rate = (files + dirs) as f64 / secs;
    let tail = if done {
        format!("in {secs:.2} s ({rate:.0} files/s), done")
    } else {
        format!("({rate:.0} files/s)")
    };
    format!("{verb} {files} files, {dirs} directories, {errors} errors {tail}")
}

/// An error as rm words it.
pub fn describe(err: &io::Error) -> String {
    let s = err.to_string();
    // "Permission denied (os error 13)" -> "Permission denied"
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// A path as rm shows it in its messages: gnulib's `quoteaf`, the
/// shell-escape-always style, so that the text pastes back into a shell.
/// `'name'`; a byte that is not printable in the locale (in the C locale,
/// every byte above 0x7e) as `'$'\ooo''`, a newline, tab or carriage
/// return as `'$'\n''`; a single quote as `'\''`, but a name whose only
/// odd character is an apostrophe in double quotes instead (`"it's"`).
pub fn quote(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    quote_bytes(path.as_os_str().as_bytes(), utf8_locale())
}

/// One character of a name: its bytes, and whether it prints.
type Unit<'a> = (&'a [u8], bool);

/// A name's characters (UTF-8 locale) or bytes (any other).
fn units(name: &[u8], utf8: bool) -> Vec<Unit<'_>> {
    if !utf8 {
        return name
            .chunks(1)
            .map(|b| (b, (0x20..0x7f).contains(&b[0])))
            .collect();
    }
    let mut out = Vec::new();
    for chunk in name.utf8_chunks() {
        let mut rest = chunk.valid();
        while let Some(c) = rest.chars().next() {
            let (one, tail) = rest.split_at(c.len_utf8());
            out.push((one.as_bytes(), !c.is_control()));
            rest = tail;
        }
        out.extend(chunk.invalid().chunks(1).map(|b| (b, false)));
    }
    out
}

/// [`quote`] for `utf8` (the locale's character set is UTF-8) or not.
fn quote_bytes(name: &[u8], utf8: bool) -> String {
    let units = units(name, utf8);
    let mut out = String::from("'");
    // Inside `$'…'`: an escape was written and not yet closed.
    let mut in_escape = false;
    let mut apostrophe = false;
    // Every character is one that double quotes keep as it is.
    let mut plain = true;
    for (i, &(unit, printable)) in units.iter().enumerate() {
        let escape = match unit {
            [b'\n'] => Some("\\n".to_string()),
            [b'\t'] => Some("\\t".to_string()),
            [b'\r'] => Some("\\r".to_string()),
            [0x07] => Some("\\a".to_string()),
            [0x08] => Some("\\b".to_string()),
            [0x0b] => Some("\\v".to_string()),
            [0x0c] => Some("\\f".to_string()),
            [c] if !printable => Some(format!("\\{c:03o}")),
            _ => None,
        };
        if let Some(e) = escape {
            plain = false;
            if !in_escape {
                out.push_str("'$'");
                in_escape = true;
            }
            out.push_str(&e);
            continue;
        }
        match unit {
            [b'\''] => {
                apostrophe = true;
                in_escape = false;
                out.push_str("'\\''");
                continue;
            }
            [b' ' | b'%' | b'+' | b',' | b'-' | b'.' | b'/' | b':' | b']' | b'_' | b'@'] => {}
            [b'{' | b'}'] if units.len() == 1 => {}
            [b'#' | b'~'] if i == 0 => {}
            [c] if c.is_ascii_alphanumeric() => {}
            // A printable character of several bytes.
            [_, _, ..] => {}
            _ => plain = false,
        }
        if std::mem::take(&mut in_escape) {
            out.push_str("''");
        }
        out.push_str(std::str::from_utf8(unit).unwrap_or_default());
    }
    if apostrophe && plain {
        // gnulib: an apostrophe is common in names; with nothing else odd,
        // the name goes in double quotes.
        return format!("\"{}\"", String::from_utf8_lossy(name));
    }
    out.push('\'');
    out
}

/// Whether the locale's character set (from `LC_ALL`, `LC_CTYPE`, `LANG`)
/// is UTF-8, as rm's `setlocale` would find it. Asked once, through a
/// locale object of its own, which is safe beside other threads.
fn utf8_locale() -> bool {
    static UTF8: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *UTF8.get_or_init(|| {
        // SAFETY: the name is NUL-terminated; a null result is checked;
        // the string nl_langinfo_l returns is read before the locale
        // object that owns it is freed.
        unsafe {
            let loc = libc::newlocale(libc::LC_CTYPE_MASK, c"".as_ptr(), std::ptr::null_mut());
            if loc.is_null() {
                return false;
            }
            let set = libc::nl_langinfo_l(libc::CODESET, loc);
            let utf8 = !set.is_null() && std::ffi::CStr::from_ptr(set).to_bytes() == b"UTF-8";
            libc::freelocale(loc);
            utf8
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each as GNU rm 9.x quotes it (and tests/as_rm.rs checks names
    /// against GNU rm itself).
    #[test]
    fn quoting_is_gnulib_shell_escape_always() {
        let q = |b: &[u8], utf8| quote_bytes(b, utf8);
        assert_eq!(q(b"a b", false), "'a b'");
        assert_eq!(q(b"it's", false), "\"it's\"");
        assert_eq!(q(b"it's $x", false), "'it'\\''s $x'");
        assert_eq!(q(b"new\nline", false), "'new'$'\\n''line'");
        assert_eq!(q(b"end\t", false), "'end'$'\\t'");
        assert_eq!(q(b"bad\xff\xfename", false), "'bad'$'\\377\\376''name'");
        assert_eq!(q("é".as_bytes(), false), "''$'\\303\\251'");
        assert_eq!(q("é".as_bytes(), true), "'é'");
        assert_eq!(q(b"\xff", true), "''$'\\377'");
    }

    #[test]
    fn describe_drops_the_os_error_number() {
        let e = io::Error::from_raw_os_error(13);
        assert_eq!(describe(&e), "Permission denied");
    }
}
