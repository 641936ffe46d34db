//! A search's work on the search threads: choosing the candidates to
//! read, reading and verifying them a chunk at a time, and printing.

use super::out::{Answers, PRINT_FRAME};
use super::schedule::{
    AHEAD, Cancels, ClaimState, Claims, Slot, Stop, StopOnPanic, VERIFY_CHUNK, cores,
};
use super::{State, lock, long};
use crate::index::{BlockTest, Regions};
use crate::live::{Root, Snapshot};
use crate::protocol::{Response, SearchQuery};
use crate::search::Pattern;
use crate::searchers::Pending;
use crate::{protocol, search};
use std::ffi::OsStr;
use std::ops::ControlFlow;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

impl State {}

/// Runs `f` over `candidates` (with a state from `init` per thread),
/// handing them to `take` in order, [`VERIFY_CHUNK`] at a time, with
/// their results and whether more chunks follow; `take` says whether to
/// go on or to stop (and whether as cancelled). A cancel stops before
/// the next chunk (in parallel, before the next file). Whether the work
/// was cancelled.
///
/// With `parallel` (a search that runs alone and reads enough), helper
/// threads made for this search (`cores() - 1`, scoped: gone when the
/// work is, so no pool stays behind to spin) take files one at a time
/// beside this thread, at most [`AHEAD`] past what `take` has had, so
/// that what waits to be handed on stays bounded; no chunk waits for its
/// slowest file before the next one starts. A helper's panic is the
/// search's. (The rayon pool this replaced kept its idle workers yielding
/// in a loop for a while after each job, on the cores the client and the
/// daemon need: 9% of the daemon's samples under one client, and its CPU
/// per sequential query was 213 against 176 µs with helper threads,
/// median of six interleaved runs.)
pub(super) fn by_chunks<T: Sync, S, R: Send>(
    parallel: bool,
    candidates: &[T],
    cancel: &AtomicBool,
    init: impl Fn() -> S + Sync + Send,
    f: impl Fn(&mut S, &T) -> R + Sync + Send,
    mut take: impl FnMut(&[T], Vec<R>, bool) -> ControlFlow<Stop>,
) -> Option<Stop> {
    let helpers = if parallel {
        cores().min(candidates.len()).saturating_sub(1)
    } else {
        0
    };
    if helpers == 0 {
        let mut state = init();
        let mut chunks = candidates.chunks(VERIFY_CHUNK).peekable();
        while let Some(chunk) = chunks.next() {
            if cancel.load(Ordering::Relaxed) {
                return Some(Stop::Cancelled);
            }
            let found = chunk.iter().map(|x| f(&mut state, x)).collect();
            if let ControlFlow::Break(stop) = take(chunk, found, chunks.peek().is_some()) {
                return Some(stop);
            }
        }
        return None;
    }
    let claims = Claims {
        state: Mutex::new(ClaimState::default()),
        room: std::sync::Condvar::new(),
        len: candidates.len(),
        cancel,
    };
    let (tx, rx) = std::sync::mpsc::channel::<(usize, R)>();
    std::thread::scope(|scope| {
        for _ in 0..helpers {
            let (claims, tx, init, f) = (&claims, tx.clone(), &init, &f);
            let helper = move || {
                // A panic here stops the others, which would otherwise
                // wait for room that never comes; the scope then panics.
                let _stop = StopOnPanic(claims);
                let mut state = init();
                while let Some(i) = claims.claim(true) {
                    if tx.send((i, f(&mut state, &candidates[i]))).is_err() {
                        break;
                    }
                }
            };
            let spawned = std::thread::Builder::new()
                .name("greppy-verify".into())
                .spawn_scoped(scope, helper);
            if spawned.is_err() {
                break;
            }
        }
        drop(tx);
        let mut state = init();
        // Results of the files in flight, file `i` in slot `i % AHEAD`: no
        // file is taken [`AHEAD`] or more past `start` (a multiple of the
        // chunk), so the slots never clash, and what waits stays bounded
        // however many candidates there are. `have`: how many of the chunk
        // from `start` are in.
        let mut ready: Vec<Option<R>> = std::iter::repeat_with(|| None).take(AHEAD).collect();
        let (mut start, mut have) = (0, 0);
        let put = |ready: &mut Vec<Option<R>>, start: usize, have: &mut usize, i: usize, r| {
            ready[i % AHEAD] = Some(r);
            if i >= start && i < start + VERIFY_CHUNK {
                *have += 1;
            }
        };
        let cancelled = loop {
            while let Ok((i, r)) = rx.try_recv() {
                put(&mut ready, start, &mut have, i, r);
            }
            // Hand on the chunk once it is whole.
            let end = (start + VERIFY_CHUNK).min(candidates.len());
            if have == end - start {
                let found: Vec<R> = (start..end)
                    .filter_map(|i| ready[i % AHEAD].take())
                    .collect();
                let more = end < candidates.len();
                if let ControlFlow::Break(stop) = take(&candidates[start..end], found, more) {
                    break Some(stop);
                }
                if !more {
                    break None;
                }
                start = end;
                claims.handed(start);
                let next = (start + VERIFY_CHUNK).min(candidates.len());
                have = (start..next).filter(|i| ready[i % AHEAD].is_some()).count();
                continue;
            }
            if cancel.load(Ordering::Relaxed) {
                break Some(Stop::Cancelled);
            }
            // Work beside the helpers while there is room; else wait for
            // theirs.
            if let Some(i) = claims.claim(false) {
                let r = f(&mut state, &candidates[i]);
                put(&mut ready, start, &mut have, i, r);
            } else {
                match rx.recv() {
                    Ok((i, r)) => put(&mut ready, start, &mut have, i, r),
                    // Every helper is gone (a cancel, or a panic that the
                    // scope raises).
                    Err(_) => break Some(Stop::Cancelled),
                }
            }
        };
        claims.stop();
        cancelled
    })
}

/// A search past its first turn: what it reads, how far it has come, and
/// what its last answer needs ([`State::done`]).
pub(super) struct Reading {
    pub(super) matcher: grep_regex::RegexMatcher,
    pub(super) what: Reads,
    /// How much reading it is in all ([`LONG_FROM`]).
    pub(super) work: u64,
    /// How many of its files (or names) were handed on.
    pub(super) at: usize,
    /// Answers (or files printed) so far.
    pub(super) matches: u64,
    pub(super) cancelled: bool,
    pub(super) errors: Vec<String>,
    pub(super) fresh: bool,
    pub(super) snap: Arc<Snapshot>,
    pub(super) root: Arc<Root>,
    pub(super) dir: PathBuf,
    pub(super) display: PathBuf,
    /// `--hidden`: the hidden walk's errors are the search's too.
    pub(super) hidden: bool,
}

/// What a search reads, and how it answers.
pub(super) enum Reads {
    /// rg's output, printed here.
    Print {
        opts: search::Options,
        reads: Vec<ToRead>,
    },
    /// Matching lines, or files with `files`.
    Lines(Vec<ToRead>),
    /// Candidates' names, unread (with their regions if asked).
    Files(Vec<(Vec<u8>, Option<Regions>)>),
}

impl Reading {
    /// Reads on until the end, or a pause ([`Stop::Pause`]); whether it is
    /// over (its last answer is [`Reading::done`]).
    pub(super) fn turn(
        &mut self,
        state: &State,
        (id, q): (u64, &SearchQuery),
        (answers, give_way): (&mut Answers, &dyn Fn() -> bool),
        cancel: &AtomicBool,
    ) -> bool {
        // What found no room at the last turn goes first.
        if !answers.flush() {
            self.cancelled = true;
            return true;
        }
        if answers.blocked() {
            return false;
        }
        let base: &crate::index::Index = &self.snap.base;
        let (handed, stop) = match &mut self.what {
            Reads::Files(files) => {
                let mut stop = None;
                let mut handed = 0;
                for (shown, regions) in &mut files[self.at..] {
                    if q.limit > 0 && self.matches >= q.limit {
                        break;
                    }
                    let file = Response::File {
                        id,
                        path: std::mem::take(shown),
                        regions: regions.take(),
                    };
                    handed += 1;
                    if !answers.push(&file) {
                        stop = Some(Stop::Cancelled);
                        break;
                    }
                    self.matches += 1;
                    if handed % VERIFY_CHUNK == 0 && (answers.blocked() || give_way()) {
                        stop = Some(Stop::Pause);
                        break;
                    }
                }
                if stop.is_none() {
                    handed = files.len() - self.at;
                }
                (handed, stop)
            }
            Reads::Print { opts, reads } => {
                let (matcher, work) = (&self.matcher, self.work);
                let (matched, errors) = (&mut self.matches, &mut self.errors);
                let reads = &reads[self.at..];
                let mut read = |parallel| {
                    let to = (&mut *answers, give_way);
                    let (matched, errors) = (&mut *matched, &mut *errors);
                    let from = (reads, base);
                    print_files(
                        id,
                        parallel,
                        opts,
                        matcher,
                        from,
                        to,
                        cancel,
                        (matched, errors),
                    )
                };
                if work < LONG_FROM {
                    read(false)
                } else {
                    long(|| read(state.alone()))
                }
            }
            Reads::Lines(reads) => {
                let (matcher, work, matches) = (&self.matcher, self.work, &mut self.matches);
                let reads = &reads[self.at..];
                let mut read = |parallel| {
                    let to = (&mut *answers, give_way);
                    verify(
                        id,
                        parallel,
                        q,
                        matcher,
                        (reads, base),
                        to,
                        cancel,
                        &mut *matches,
                    )
                };
                if work < LONG_FROM {
                    read(false)
                } else {
                    long(|| read(state.alone()))
                }
            }
        };
        self.at += handed;
        match stop {
            Some(Stop::Pause) => false,
            Some(Stop::Cancelled) => {
                self.cancelled = true;
                true
            }
            Some(Stop::Full) | None => true,
        }
    }

    /// Its last answer.
    pub(super) fn done(self, state: &State, id: u64) -> Response {
        let found = (self.matches, self.cancelled);
        let (snap, dir, display) = (&*self.snap, &*self.dir, &*self.display);
        state.done(
            id,
            found,
            self.fresh,
            (snap, dir, display, self.hidden),
            &self.root,
            self.errors,
        )
    }
}

/// A search as a task that runs in turns ([`crate::searchers`]): its first
/// turn chooses what to read, the next ones read it, a chunk of files at
/// least at a time, and the last sends its last answer.
pub(super) struct SearchTask {
    pub(super) state: Arc<State>,
    pub(super) id: u64,
    pub(super) query: SearchQuery,
    pub(super) cancel: Arc<AtomicBool>,
    pub(super) cancels: Cancels,
    pub(super) answers: Answers,
    pub(super) slot: Option<Slot>,
    pub(super) pending: Option<Pending>,
    pub(super) stage: Stage,
}

pub(super) enum Stage {
    Start,
    Read(Box<Reading>),
    /// The last answer is gathered, to go out.
    Last,
}

impl SearchTask {
    /// Gathers `last`, the search's last answer, and lets go of its slot
    /// and its place among the pending searches before it goes out.
    pub(super) fn last(&mut self, last: &Response) {
        protocol::encode_into(last, &mut self.answers.buf);
        lock(&self.cancels).remove(&self.id);
        self.slot = None;
        self.pending = None;
        self.stage = Stage::Last;
    }

    pub(super) fn wait(&self) -> crate::searchers::Step {
        crate::searchers::Step::Wait(Arc::new(self.answers.out.clone()))
    }
}

impl crate::searchers::Task for SearchTask {
    fn turn(&mut self, give_way: &dyn Fn() -> bool) -> crate::searchers::Step {
        use crate::searchers::Step;
        loop {
            match &mut self.stage {
                Stage::Start => match self.state.begin(self.id, &self.query) {
                    Ok(reading) => self.stage = Stage::Read(Box::new(reading)),
                    Err(last) => self.last(&last),
                },
                Stage::Read(reading) => {
                    let (to, q) = ((&mut self.answers, give_way), (self.id, &self.query));
                    if !reading.turn(&self.state, q, to, &self.cancel) {
                        return if self.answers.blocked() {
                            self.wait()
                        } else {
                            Step::GiveWay
                        };
                    }
                    if let Stage::Read(reading) = std::mem::replace(&mut self.stage, Stage::Last) {
                        let last = reading.done(&self.state, self.id);
                        self.last(&last);
                    }
                }
                Stage::Last => {
                    self.answers.flush();
                    return if self.answers.blocked() {
                        self.wait()
                    } else {
                        Step::Done
                    };
                }
            }
        }
    }
}

/// A candidate file to read: where it is, its name as answered, the
/// parts of it to read (`None`: all of it), and its id in the snapshot's
/// base if it is read from the index's copy of it.
pub(super) struct ToRead {
    pub(super) path: PathBuf,
    pub(super) shown: Vec<u8>,
    pub(super) regions: Option<Regions>,
    pub(super) stored: Option<usize>,
}

impl ToRead {
    /// Where its bytes come from, beside its path: the copy in `base`.
    pub(super) fn stored<'a>(&self, base: &'a crate::index::Index) -> Option<search::Stored<'a>> {
        self.stored.map(|id| search::Stored { index: base, id })
    }
}

/// The longest pattern a search takes as plain (a word or a literal)
/// without building its matcher to check it ([`State::search`]): far below
/// any size the regex engine refuses.
pub(super) const PLAIN_MAX: usize = 4096;

/// Reading one more file costs about this much beside its bytes (open,
/// close, a searcher's set-up), in bytes' worth of reading.
pub(super) const FILE_COST: u64 = 16 << 10;

/// A search's reading runs on the worker that runs the search up to this
/// many bytes' worth ([`FILE_COST`]), a few hundred microseconds: past it,
/// it leaves the worker ([`long`]) and, when the search runs alone, is
/// shared with helper threads ([`by_chunks`]). A selective search reads
/// about ten files, in parts: well under it. (Shared from 64 KiB on, as
/// before, half the selective searches made a helper thread: serial, the
/// daemon's CPU per sequential query fell from 156 to 144 µs, median of
/// five interleaved runs, at the same rate.)
pub(super) const LONG_FROM: u64 = 1 << 20;

/// A search whose candidates pass this many names them ([`State::search`]'s
/// filters) off the worker.
pub(super) const LONG_CANDIDATES: usize = 1024;

/// The candidates to open, in order, with the parts of each to read. In a
/// fresh snapshot a file is as its index entry says, so one whose blocks
/// all rule the pattern out cannot match, and is left out. (In a stale one
/// it is opened, and read whole if its size has changed.) With `copies`,
/// a file the index keeps a copy of is read from the copy. Half of a
/// selective search's candidates were such files: large ones that hold
/// every trigram of the pattern, but not in one block. Also how much work
/// reading them is, in bytes' worth ([`LONG_FROM`]; a file changed since the base index, whose size it does not know, is counted
/// as [`FILE_COST`] of bytes).
pub(super) fn to_read(
    snap: &Snapshot,
    test: &BlockTest<'_>,
    (fresh, copies): (bool, bool),
    candidates: Vec<(PathBuf, Option<usize>, Vec<u8>)>,
) -> (Vec<ToRead>, u64) {
    let mut work = 0u64;
    let reads = candidates
        .into_iter()
        .filter_map(|(path, base_id, shown)| {
            let regions = snap.regions(base_id, test);
            let bytes = match &regions {
                Some(r) if fresh && r.parts.is_empty() => return None,
                Some(r) => r.parts.iter().map(|p| p.end - p.start).sum(),
                None => base_id.map_or(FILE_COST, |i| snap.base.size(i)),
            };
            work += FILE_COST + bytes;
            // A fresh snapshot's base file is as the index says: its copy
            // is the file (read where `copies` says).
            let stored = base_id.filter(|&i| fresh && copies && snap.base.keeps(i));
            Some(ToRead {
                path,
                shown,
                regions,
                stored,
            })
        })
        .collect();
    (reads, work)
}

/// The search options a `print` request asks for.
pub(super) fn print_options(
    pattern: Pattern,
    p: &protocol::Print,
) -> Result<search::Options, String> {
    let output = match p.output.as_str() {
        "" | "lines" => search::Output::Lines,
        "count" => search::Output::Count,
        "count-matches" => search::Output::CountMatches,
        "files" => search::Output::Files,
        other => {
            return Err(format!(
                "unknown output {other:?} (lines, count, count-matches, files)"
            ));
        }
    };
    let lines = |n: u64| usize::try_from(n).map_err(|_| format!("{n} context lines"));
    Ok(search::Options {
        pattern,
        output,
        max_count: (p.max_count > 0).then_some(p.max_count),
        before: lines(p.before)?,
        after: lines(p.after)?,
        line_number: p.line_number,
        with_path: p.with_path,
        heading: p.heading,
        color: p.color,
        limit: None,
        // The index's files may be a moment ahead of the tree.
        gone_ok: true,
        invert: false,
        only_matching: p.only_matching,
    })
}

/// Searches `reads` (only the parts each names, where that suffices) a
/// chunk at a time (with helper threads when `parallel`), and answers what rg
/// prints for them, in their order, in `printed` answers of at most
/// [`PRINT_FRAME`] bytes; files that cannot be read are added to `errors`,
/// as rg words them. `matched`: files that matched before these (it counts
/// on). A cancel stops at the next chunk, and so does a pause ([`Stop`]:
/// another search waits, `give_way`, or the client reads nothing for
/// now). How many of `reads` were handed on, and why it stopped early.
#[allow(clippy::too_many_arguments)]
pub(super) fn print_files(
    id: u64,
    parallel: bool,
    opts: &search::Options,
    matcher: &grep_regex::RegexMatcher,
    (reads, base): (&[ToRead], &crate::index::Index),
    (answers, give_way): (&mut Answers, &dyn Fn() -> bool),
    cancel: &AtomicBool,
    (matched, errors): (&mut u64, &mut Vec<String>),
) -> (usize, Option<Stop>) {
    let between = search::between_files(opts);
    let mut handed = 0;
    let stop = by_chunks(
        parallel,
        reads,
        cancel,
        || (search::searcher(opts), per_thread(matcher, parallel)),
        |(s, matcher), r| {
            let shown = Path::new(OsStr::from_bytes(&r.shown));
            let (regions, stored) = (r.regions.as_ref(), r.stored(base));
            search::print_file(s, matcher, opts, (&r.path, shown), regions, stored)
        },
        |chunk, printed: Vec<search::Printed>, more| {
            handed += chunk.len();
            // The chunk's output, joined as rg joins files.
            let mut out = Vec::new();
            for p in printed {
                match p.result {
                    Err(e) => errors.push(e),
                    Ok(0) => {}
                    Ok(_) => {
                        if *matched > 0 {
                            out.extend_from_slice(between);
                        }
                        *matched += 1;
                        out.extend_from_slice(&p.bytes);
                    }
                }
            }
            // Mostly one piece, sent as it is; a larger output is cut.
            let pieces: Vec<Vec<u8>> = if out.len() <= PRINT_FRAME {
                vec![out]
            } else {
                out.chunks(PRINT_FRAME).map(<[u8]>::to_vec).collect()
            };
            for bytes in pieces.into_iter().filter(|b| !b.is_empty()) {
                if !answers.push(&Response::Printed { id, bytes }) {
                    return ControlFlow::Break(Stop::Cancelled);
                }
            }
            after_chunk(answers, give_way, more)
        },
    );
    (handed, stop)
}

/// The matcher a thread of a search uses: with helper threads, a clone
/// for each (a clone has its own pool of caches, where threads that share
/// one wait on each other: 11% of the daemon's samples on `-c e`); alone,
/// the search's own, whose caches are warm (a clone builds them anew).
pub(super) fn per_thread(
    matcher: &grep_regex::RegexMatcher,
    parallel: bool,
) -> std::borrow::Cow<'_, grep_regex::RegexMatcher> {
    if parallel {
        std::borrow::Cow::Owned(matcher.clone())
    } else {
        std::borrow::Cow::Borrowed(matcher)
    }
}

/// At a chunk's end: whether a search goes on to its next chunk.
pub(super) fn after_chunk(
    answers: &mut Answers,
    give_way: &dyn Fn() -> bool,
    more: bool,
) -> ControlFlow<Stop> {
    if !more {
        return ControlFlow::Continue(());
    }
    if !answers.between_chunks() {
        return ControlFlow::Break(Stop::Cancelled);
    }
    if answers.blocked() || give_way() {
        return ControlFlow::Break(Stop::Pause);
    }
    ControlFlow::Continue(())
}

/// Reads `reads` (only the parts each names, where it names some) a chunk
/// at a time (with helper threads when `parallel`), and answers their
/// matching lines, or the files with one with `files`, in path order;
/// `matches`: answers sent before these (it counts on, to the limit). A
/// cancel or the limit stops at the next chunk, and so does a pause, as
/// in [`print_files`]. How many of `reads` were handed on, and why it
/// stopped early.
#[allow(clippy::too_many_arguments)]
pub(super) fn verify(
    id: u64,
    parallel: bool,
    q: &SearchQuery,
    matcher: &grep_regex::RegexMatcher,
    (reads, base): (&[ToRead], &crate::index::Index),
    (answers, give_way): (&mut Answers, &dyn Fn() -> bool),
    cancel: &AtomicBool,
    matches: &mut u64,
) -> (usize, Option<Stop>) {
    let full = |matches: u64| q.limit > 0 && matches >= q.limit;
    let mut handed = 0;
    let stop = by_chunks(
        parallel,
        reads,
        cancel,
        || per_thread(matcher, parallel),
        |matcher, r| {
            if q.files {
                if search::file_matches(matcher, &r.path, r.regions.as_ref(), r.stored(base)) {
                    vec![(0, Vec::new())]
                } else {
                    Vec::new()
                }
            } else {
                search::file_lines(matcher, &r.path, r.regions.as_ref(), r.stored(base))
            }
        },
        |chunk, found, more| {
            handed += chunk.len();
            for (ToRead { shown, .. }, lines) in chunk.iter().zip(found) {
                if q.files && !lines.is_empty() {
                    let file = Response::File {
                        id,
                        path: shown.clone(),
                        regions: None,
                    };
                    if !answers.push(&file) {
                        return ControlFlow::Break(Stop::Cancelled);
                    }
                    *matches += 1;
                    if full(*matches) {
                        return ControlFlow::Break(Stop::Full);
                    }
                    continue;
                }
                for (line, text) in lines {
                    let m = Response::Match {
                        id,
                        path: shown.clone(),
                        line,
                        text,
                    };
                    if !answers.push(&m) {
                        return ControlFlow::Break(Stop::Cancelled);
                    }
                    *matches += 1;
                    if full(*matches) {
                        return ControlFlow::Break(Stop::Full);
                    }
                }
            }
            after_chunk(answers, give_way, more)
        },
    );
    (handed, stop)
}

/// How a search names file `p`, found under `dir`, to a client that
/// names `dir` as `display`: `display` joined with the path below `dir`
/// (just `display` for `dir` itself), as bytes; and the length of the
/// part below `dir`, if there is one (a bare name prints only that). By
/// bytes: the index's paths and `dir` are canonical, so a path below
/// `dir` is `dir`, a slash and the rest.
pub(super) fn shown_name(p: &Path, dir: &Path, display: &Path) -> (Vec<u8>, Option<usize>) {
    let (p, dir) = (p.as_os_str().as_bytes(), dir.as_os_str().as_bytes());
    let display = display.as_os_str().as_bytes();
    let rel = p.strip_prefix(dir).and_then(|rest| {
        if dir.ends_with(b"/") {
            Some(rest)
        } else {
            rest.strip_prefix(b"/")
        }
    });
    match rel {
        Some(rel) if !rel.is_empty() => {
            let mut out = Vec::with_capacity(display.len() + 1 + rel.len());
            out.extend_from_slice(display);
            if !display.is_empty() && !display.ends_with(b"/") {
                out.push(b'/');
            }
            out.extend_from_slice(rel);
            (out, Some(rel.len()))
        }
        _ => (display.to_vec(), None),
    }
}
