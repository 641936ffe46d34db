//! The wire protocol between greppy's clients and its daemon: frames of a
//! 4-byte big-endian length and a MessagePack body (rmp-serde, structs as
//! maps so that fields can be added). `PROTOCOL.md` describes it for
//! clients in other languages.
//!
//! [`encode`] makes a frame; [`Decoder`] takes bytes as they arrive and
//! yields whole messages. A frame over the size limit, or one whose body
//! does not decode, is an error the caller answers and then closes that
//! connection on: the stream cannot be trusted past it.

use serde::{Deserialize, Serialize, de::DeserializeOwned};

/// The protocol version; the handshake refuses any other. 2: `print`'s
/// `only_matching` and `count-matches` output (a daemon that speaks 1
/// would ignore them and print whole lines).
pub const VERSION: u32 = 2;

/// The default limit on one frame's body (a request).
pub const MAX_FRAME: usize = 1 << 20;

/// The limit on one answer's frame that the client accepts: a `match`
/// carries a whole line, and a minified bundle's line can be megabytes.
pub const MAX_ANSWER_FRAME: usize = 256 << 20;

/// What a client asks. Every request but `hello` carries an id, which its
/// answers repeat.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Request {
    /// The first message on a connection.
    Hello { version: u32, client: String },
    /// An exact search; answers stream as `match`es (or `file`s), then one
    /// `done`; or one `scan` if the index cannot answer it.
    Search { id: u64, query: SearchQuery },
    /// A ranked search: answers stream as `hit`s, best first (definitions
    /// before other spans), then one `done`.
    Find { id: u64, query: FindQuery },
    /// Stop the search `id` (its `done` says `cancelled`).
    Cancel { id: u64 },
    /// Index the tree holding `path` (again, if it is indexed), and answer
    /// `indexed` when it is done.
    Index {
        id: u64,
        #[serde(with = "serde_bytes")]
        path: Vec<u8>,
    },
    /// The indexed trees: one `status`.
    Status { id: u64 },
    /// Stop keeping the tree at `path` and delete its index: `ok`.
    Forget {
        id: u64,
        #[serde(with = "serde_bytes")]
        path: Vec<u8>,
    },
    /// Stop the daemon: `ok`, then it closes every connection and exits.
    Shutdown { id: u64 },
}

/// An exact search, as the command line's flags say it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SearchQuery {
    /// rg's regex syntax (a literal with `fixed`).
    pub pattern: String,
    /// The folder to search, absolute.
    #[serde(with = "serde_bytes")]
    pub path: Vec<u8>,
    /// How answers name files: this joined with the path below `path`
    /// (`src` gives `src/lib.rs`, as rg names them); empty: absolute.
    #[serde(with = "serde_bytes")]
    pub display: Vec<u8>,
    /// The folder `globs` are relative to (rg: the current folder).
    #[serde(with = "serde_bytes")]
    pub cwd: Vec<u8>,
    pub fixed: bool,
    pub ignore_case: bool,
    pub smart_case: bool,
    pub word: bool,
    /// rg's `-g`: globs that exclude (`!GLOB`). A glob that lets files in
    /// can bring in ignored files, which the index leaves out: `scan`.
    pub globs: Vec<String>,
    /// rg's `-t`: type names.
    pub types: Vec<String>,
    /// rg's `--hidden`: hidden files and folders too (kept beside the
    /// index; a folder named `.git` that the globs let in: `scan`).
    pub hidden: bool,
    /// rg's `--follow`: `scan` if the walk meets a symbolic link.
    pub follow: bool,
    /// rg's `--no-ignore-parent`: `scan` if rg would apply ignore rules
    /// from the folders above `path`.
    pub no_ignore_parent: bool,
    /// rg's `--no-ignore-global`: `scan` if git's global excludes file
    /// holds a rule.
    pub no_ignore_global: bool,
    /// Answer one `file` per matching file instead of `match` per line.
    pub files: bool,
    /// With `files`: answer the files that may match, unread (the index's
    /// candidates, past the filters), for a client that reads them itself.
    /// A file that does not match is possible; a match is never left out.
    pub candidates: bool,
    /// With `candidates`: each file the index has blocks for comes with
    /// the parts of it that may match (see `Regions`).
    pub regions: bool,
    /// At most this many matching lines (files, with `files`) in all (0: no
    /// limit).
    pub limit: u64,
    /// Wait up to this many ms for an answer that is fresh, through a
    /// rebuild or a catch-up if need be (0: wait only briefly for changes
    /// already reported, never for a build).
    pub wait_ms: u64,
    /// Answer what rg would print, in `printed` pieces (files in path
    /// order), instead of `match` or `file` answers (`files`, `candidates`
    /// and `limit` are then not used; `done` counts the matching files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub print: Option<Print>,
}

/// How rg would print, for a search answered as `printed` output.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Print {
    /// `lines` (rg's default), `count` (`-c`), `count-matches`
    /// (`--count-matches`) or `files` (`-l`).
    pub output: String,
    /// `-o`: each match on a line of its own.
    pub only_matching: bool,
    /// `-m N`: at most N matching lines per file (0: no limit).
    pub max_count: u64,
    /// `-B N`, `-A N`: context lines.
    pub before: u64,
    pub after: u64,
    /// Line numbers before lines (`-n`; rg's default on a terminal).
    pub line_number: bool,
    /// The path before each line (rg: unless it searches one file).
    pub with_path: bool,
    /// Lines grouped under a heading per file (rg on a terminal).
    pub heading: bool,
    /// rg's colours (ANSI escapes).
    pub color: bool,
    /// Name files by their path below `path` alone, without `display`: rg's
    /// names when it is given no path (it searches `./` and leaves out the
    /// `./`).
    pub bare: bool,
}

/// A ranked search (`greppy find`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct FindQuery {
    /// Words, identifiers or a question ("where is the retry policy set").
    pub query: String,
    /// The folder to search, absolute.
    #[serde(with = "serde_bytes")]
    pub path: Vec<u8>,
    /// How answers name files, as in `SearchQuery`.
    #[serde(with = "serde_bytes")]
    pub display: Vec<u8>,
    /// At most this many hits (0: 10).
    pub limit: u64,
    /// As in `SearchQuery`; a tree not indexed yet is always waited for.
    pub wait_ms: u64,
}

/// One indexed tree, as `status` reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RootInfo {
    #[serde(with = "serde_bytes")]
    pub root: Vec<u8>,
    /// `building`, `catching_up`, `watching` or `rebuilding`.
    pub phase: String,
    pub files: u64,
    /// The bytes of the files indexed.
    pub source_bytes: u64,
    /// The index's size on disk (changes not merged yet are beside it).
    pub index_bytes: u64,
    /// Changed files not merged into the index yet.
    pub changes: u64,
    /// When the answers last changed, in ms since the epoch.
    pub updated_ms: u64,
    /// Every change the watcher reported is in the answers.
    pub fresh: bool,
    /// Why the tree is not watched, if it is not.
    pub error: Option<String>,
}

/// What the daemon answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Response {
    Hello {
        version: u32,
        server: String,
    },
    /// One matching line. `path` and `text` are MessagePack binary:
    /// neither need be UTF-8.
    Match {
        id: u64,
        #[serde(with = "serde_bytes")]
        path: Vec<u8>,
        line: u64,
        #[serde(with = "serde_bytes")]
        text: Vec<u8>,
    },
    /// One ranked answer: lines `start` to `end` (1-based, inclusive) of
    /// `path`. `kind`: `function`, `method`, `struct`, `class`, `enum`,
    /// `trait`, `interface`, `type`, `module`, `macro`, `const`, `impl`, or
    /// `text` (lines outside every definition); `name` is empty for
    /// `text`.
    Hit {
        id: u64,
        #[serde(with = "serde_bytes")]
        path: Vec<u8>,
        start: u32,
        end: u32,
        score: f32,
        kind: String,
        name: String,
    },
    /// One matching file (a search with `files`). With `regions` asked,
    /// a candidate the index has blocks for comes with the parts of it
    /// that may match.
    File {
        id: u64,
        #[serde(with = "serde_bytes")]
        path: Vec<u8>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        regions: Option<crate::index::Regions>,
    },
    /// A piece of what rg prints for search `id` (with `print`): the
    /// client writes the pieces one after another. Files come in path
    /// order, with `--` between them where rg prints it; a piece holds the
    /// output of one or more files, or part of a large one.
    Printed {
        id: u64,
        #[serde(with = "serde_bytes")]
        bytes: Vec<u8>,
    },
    /// The end of search `id`. `fresh`: the index had every change of the
    /// tree when it answered. `errors`: what rg would report of the walk
    /// (an unreadable folder), as rg words it. `note`: why an answer that
    /// is not fresh may miss changes, when a person should be told (the
    /// daemon is catching up after a restart, or rebuilding).
    Done {
        id: u64,
        matches: u64,
        fresh: bool,
        cancelled: bool,
        #[serde(default)]
        errors: Vec<String>,
        #[serde(default)]
        note: Option<String>,
    },
    /// The index cannot answer search `id`: search by scanning. `reason`
    /// says why when it is worth telling a person (the tree is still being
    /// indexed); none when rg's own rules send the search outside the
    /// index (an ignored or hidden folder named, a glob that lets ignored
    /// files in).
    Scan {
        id: u64,
        reason: Option<String>,
    },
    /// The tree holding the path of `index` request `id` is indexed.
    Indexed {
        id: u64,
        root: RootInfo,
        millis: u64,
    },
    Status {
        id: u64,
        roots: Vec<RootInfo>,
    },
    /// Request `id` is done (`forget`, `shutdown`).
    Ok {
        id: u64,
    },
    /// Too many connections or searches in flight: try again later. Never
    /// a silent drop.
    Busy {
        id: Option<u64>,
    },
    /// A request that cannot be answered; `id` if it names one.
    Error {
        id: Option<u64>,
        message: String,
    },
}

/// What went wrong with the bytes of a connection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("frame of {0} bytes is over the limit of {1}")]
    TooLarge(usize, usize),
    #[error("frame does not decode: {0}")]
    Malformed(String),
}

/// A message as a frame: its length, then its MessagePack body.
pub fn encode<T: Serialize>(msg: &T) -> Vec<u8> {
    let mut out = Vec::new();
    encode_into(msg, &mut out);
    out
}

/// Appends one frame to `out` (many frames then go in one write).
pub fn encode_into<T: Serialize>(msg: &T, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    rmp_serde::encode::write_named(out, msg).expect("protocol messages always serialise");
    let len = (out.len() - start - 4) as u32;
    out[start..start + 4].copy_from_slice(&len.to_be_bytes());
}

/// Turns bytes, as they arrive, into messages.
#[derive(Debug)]
pub struct Decoder {
    /// `buf[start..end]` arrived and is not decoded yet. Past `end` the
    /// buffer is room to read into, zeroed once when it grew.
    buf: Vec<u8>,
    start: usize,
    end: usize,
    max: usize,
}

/// The least room [`Decoder::read_from`] reads into.
const READ_CHUNK: usize = 16 << 10;

impl Decoder {
    pub fn new(max: usize) -> Self {
        Decoder {
            buf: Vec::new(),
            start: 0,
            end: 0,
            max,
        }
    }

    /// Bytes that arrived.
    pub fn push(&mut self, bytes: &[u8]) {
        self.make_room(bytes.len());
        self.buf[self.end..self.end + bytes.len()].copy_from_slice(bytes);
        self.end += bytes.len();
    }

    /// Reads what `r` has (one `read`) straight into the buffer; `Ok(0)` at
    /// its end. The room grows with what is held (it doubles), so a large
    /// answer is read in large pieces and a small one touches little
    /// memory.
    pub fn read_from(&mut self, r: &mut impl std::io::Read) -> std::io::Result<usize> {
        self.make_room(READ_CHUNK);
        let n = r.read(&mut self.buf[self.end..])?;
        self.end += n;
        Ok(n)
    }

    /// Makes room for `more` bytes past `end`: the bytes decoded already
    /// are dropped once they are half of what is held (each byte is moved
    /// at most once per frame boundary crossing, not once per message
    /// decoded before it), and the buffer doubles when that is not enough.
    fn make_room(&mut self, more: usize) {
        if self.start > 0 && self.start * 2 >= self.end {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.buf.len() - self.end < more {
            let want = (self.end + more).max(2 * self.buf.len());
            self.buf.resize(want, 0);
        }
    }

    /// The next whole message, `Ok(None)` if it has not all arrived. The
    /// length is checked as soon as it is read, so an oversized frame is
    /// refused before its body is buffered.
    pub fn decode<T: DeserializeOwned>(&mut self) -> Result<Option<T>, FrameError> {
        let held = &self.buf[self.start..self.end];
        let Some(len) = held.get(..4) else {
            return Ok(None);
        };
        let len = u32::from_be_bytes(len.try_into().expect("four bytes")) as usize;
        if len > self.max {
            return Err(FrameError::TooLarge(len, self.max));
        }
        if held.len() < 4 + len {
            return Ok(None);
        }
        let r = rmp_serde::from_slice(&held[4..4 + len]);
        self.start += 4 + len;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        r.map(Some)
            .map_err(|e| FrameError::Malformed(e.to_string()))
    }

    /// Bytes held for a frame not yet complete.
    pub fn pending(&self) -> usize {
        self.end - self.start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(id: u64) -> Request {
        Request::Search {
            id,
            query: SearchQuery {
                pattern: "retry_policy".into(),
                path: b"/src".to_vec(),
                ..SearchQuery::default()
            },
        }
    }

    #[test]
    fn frames_round_trip_whole_cut_and_together() {
        let mut wire = encode(&Request::Hello {
            version: VERSION,
            client: "test".into(),
        });
        wire.extend(encode(&search(1)));
        wire.extend(encode(&Request::Cancel { id: 1 }));
        // Byte by byte: nothing until a frame is whole.
        let mut d = Decoder::new(MAX_FRAME);
        let mut got: Vec<Request> = Vec::new();
        for b in &wire {
            d.push(std::slice::from_ref(b));
            while let Some(m) = d.decode().unwrap() {
                got.push(m);
            }
        }
        assert_eq!(got.len(), 3);
        assert_eq!(got[1], search(1));
        assert_eq!(d.pending(), 0);
        // All at once.
        let mut d = Decoder::new(MAX_FRAME);
        d.push(&wire);
        assert!(matches!(
            d.decode::<Request>().unwrap(),
            Some(Request::Hello { .. })
        ));
        assert_eq!(d.decode::<Request>().unwrap(), Some(search(1)));
    }

    /// Many small frames in one piece (a pipelined burst, a large answer)
    /// are decoded in time linear in their bytes: decoding used to move
    /// every byte after a message each time (400,000 frames: 25 s, against
    /// under a second).
    #[test]
    fn a_burst_of_frames_is_decoded_in_linear_time() {
        const N: u64 = 400_000;
        let mut wire = Vec::new();
        for id in 0..N {
            encode_into(&Request::Cancel { id }, &mut wire);
        }
        let started = std::time::Instant::now();
        let mut d = Decoder::new(MAX_FRAME);
        let mut n = 0u64;
        let mut drain = |d: &mut Decoder| {
            while let Some(m) = d.decode::<Request>().unwrap() {
                assert_eq!(m, Request::Cancel { id: n });
                n += 1;
            }
        };
        // Two pieces, the second cutting a frame: one pushed, one read.
        let (a, b) = wire.split_at(wire.len() / 2 + 3);
        d.push(a);
        drain(&mut d);
        let mut reader = std::io::Cursor::new(b);
        while d.read_from(&mut reader).unwrap() > 0 {
            drain(&mut d);
        }
        assert_eq!(n, N);
        assert_eq!(d.pending(), 0);
        // The bound is far from both.
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn bytes_that_are_not_utf8_survive() {
        let m = Response::Match {
            id: 7,
            path: b"src/caf\xe9.rs".to_vec(),
            line: 3,
            text: b"\xff\xfe retry".to_vec(),
        };
        let mut d = Decoder::new(MAX_FRAME);
        d.push(&encode(&m));
        assert_eq!(d.decode::<Response>().unwrap(), Some(m));
    }

    #[test]
    fn oversized_and_malformed_frames_are_errors() {
        let mut d = Decoder::new(16);
        d.push(&1000u32.to_be_bytes());
        assert_eq!(d.decode::<Request>(), Err(FrameError::TooLarge(1000, 16)));
        let mut d = Decoder::new(MAX_FRAME);
        d.push(&3u32.to_be_bytes());
        d.push(&[0xc1, 0xc1, 0xc1]);
        assert!(matches!(
            d.decode::<Request>(),
            Err(FrameError::Malformed(_))
        ));
        // A well-formed body of the wrong shape, too.
        let mut d = Decoder::new(MAX_FRAME);
        d.push(&encode(&42u32));
        assert!(matches!(
            d.decode::<Request>(),
            Err(FrameError::Malformed(_))
        ));
    }
}
