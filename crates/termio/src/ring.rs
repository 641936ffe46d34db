//! The PTY's output as a bounded window of one byte stream.
//!
//! Every byte the PTY gives has a sequence number: its offset in the
//! stream since the session began. The ring keeps the last `capacity`
//! bytes. Each client reads from its own cursor (a sequence number), so a
//! client that reconnects with the last number it has gets exactly the
//! bytes it missed, and one that fell out of the window is told exactly
//! which bytes it lost ([`Read::Lost`]); nothing is dropped unsaid.
//!
//! A frame ([`Ring::read`]) never ends inside a UTF-8 sequence: a
//! terminal that decodes each frame by itself would otherwise show U+FFFD
//! for a character cut in two. Bytes that are not UTF-8 pass as they are.

/// The last `capacity` bytes of a stream, by sequence number.
#[derive(Debug)]
pub struct Ring {
    buf: Box<[u8]>,
    /// Bytes pushed since the stream began: the next byte's number.
    end: u64,
}

/// What a client at some cursor reads next.
#[derive(Debug, PartialEq, Eq)]
pub enum Read<'a> {
    /// The bytes from the cursor on, in at most two pieces (the ring wraps
    /// between them), and the cursor after them.
    Bytes {
        first: &'a [u8],
        second: &'a [u8],
        next: u64,
    },
    /// The bytes from `from` up to `to` have left the window: the client
    /// lost them, and goes on from `to`.
    Lost { from: u64, to: u64 },
    /// Nothing to read yet (or only the start of a UTF-8 sequence whose
    /// rest has not come).
    Empty,
}

impl Ring {
    /// A ring that keeps the last `capacity` bytes (at least one).
    pub fn new(capacity: usize) -> Ring {
        Ring {
            buf: vec![0u8; capacity.max(1)].into_boxed_slice(),
            end: 0,
        }
    }

    /// How many bytes it keeps.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// The number of the next byte to come.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// The number of the oldest byte it still has.
    pub fn start(&self) -> u64 {
        self.end.saturating_sub(self.buf.len() as u64)
    }

    /// Appends `bytes`, forgetting the oldest when the window is full.
    pub fn push(&mut self, mut bytes: &[u8]) {
        let cap = self.buf.len();
        if bytes.len() > cap {
            // Only the last `cap` bytes stay; the rest pass through unseen.
            self.end += (bytes.len() - cap) as u64;
            bytes = &bytes[bytes.len() - cap..];
        }
        let at = (self.end % cap as u64) as usize;
        let first = bytes.len().min(cap - at);
        self.buf[at..at + first].copy_from_slice(&bytes[..first]);
        self.buf[..bytes.len() - first].copy_from_slice(&bytes[first..]);
        self.end += bytes.len() as u64;
    }

    /// Where a client that lost bytes goes on: the window's start, or past
    /// the continuation bytes there (at most three), so that it does not
    /// take the rest of a character whose start it lost. Those bytes count
    /// as lost with the rest.
    fn resume_at(&self) -> u64 {
        let cap = self.buf.len() as u64;
        let mut at = self.start();
        while at < self.end && at < self.start() + 3 && self.buf[(at % cap) as usize] & 0xC0 == 0x80
        {
            at += 1;
        }
        at
    }

    /// What a client at `cursor` reads next: at most `max` bytes (or one
    /// whole character, if `max` is less), ending on a UTF-8 boundary. A
    /// cursor past the end reads nothing.
    pub fn read(&self, cursor: u64, max: usize) -> Read<'_> {
        if cursor < self.start() {
            return Read::Lost {
                from: cursor,
                to: self.resume_at(),
            };
        }
        if cursor >= self.end {
            return Read::Empty;
        }
        let cap = self.buf.len();
        let avail = (self.end - cursor) as usize;
        let at = (cursor % cap as u64) as usize;
        let piece = |n: usize| {
            let first = n.min(cap - at);
            (&self.buf[at..at + first], &self.buf[..n - first])
        };
        // `n` bytes, less a sequence cut at their end.
        let whole = |n: usize| {
            let (a, b) = piece(n);
            let mut tail = [0u8; 4];
            let k = n.min(4);
            for (t, &x) in tail.iter_mut().zip(a.iter().chain(b).skip(n - k)) {
                *t = x;
            }
            n - incomplete_tail(&tail[..k])
        };
        let mut n = whole(avail.min(max.max(1)));
        if n == 0 && avail > max {
            // `max` is less than one character: the character goes whole.
            n = whole(avail.min(4));
        }
        if n == 0 {
            return Read::Empty;
        }
        let (first, second) = piece(n);
        Read::Bytes {
            first,
            second,
            next: cursor + n as u64,
        }
    }
}

impl Ring {
    /// All the bytes from `cursor` (in the window) to the end, in at most
    /// two pieces, with no regard for UTF-8: for the stream's very end.
    pub fn rest(&self, cursor: u64) -> (&[u8], &[u8]) {
        let cursor = cursor.clamp(self.start(), self.end);
        let cap = self.buf.len();
        let n = (self.end - cursor) as usize;
        let at = (cursor % cap as u64) as usize;
        let first = n.min(cap - at);
        (&self.buf[at..at + first], &self.buf[..n - first])
    }
}

/// How many bytes at the end of `bytes` are the start of a UTF-8 sequence
/// whose rest is not there (0 if it ends on a boundary, or the end is not
/// UTF-8 at all: those bytes go as they are).
pub fn incomplete_tail(bytes: &[u8]) -> usize {
    // A sequence is at most four bytes: look at the last three for its
    // lead byte.
    for back in 1..=bytes.len().min(3) {
        let b = bytes[bytes.len() - back];
        if b & 0xC0 == 0x80 {
            // A continuation byte: its lead is further back.
            continue;
        }
        let need = match b {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            // ASCII, or a byte no sequence starts with.
            _ => return 0,
        };
        return if back < need { back } else { 0 };
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(r: Read<'_>) -> (Vec<u8>, u64) {
        match r {
            Read::Bytes {
                first,
                second,
                next,
            } => ([first, second].concat(), next),
            other => panic!("{other:?}"),
        }
    }

    /// A client reads the stream from its cursor, across the ring's wrap,
    /// in frames of at most `max` bytes; past the window it is told what
    /// it lost, and reads on from the window's start.
    #[test]
    fn clients_read_from_their_cursors_and_learn_what_they_lost() {
        let mut r = Ring::new(10);
        r.push(b"abcdef");
        assert_eq!(bytes(r.read(0, 100)), (b"abcdef".to_vec(), 6));
        assert_eq!(bytes(r.read(2, 3)), (b"cde".to_vec(), 5));
        assert_eq!(r.read(6, 100), Read::Empty);
        r.push(b"ghijkl");
        assert_eq!((r.start(), r.end()), (2, 12));
        assert_eq!(r.read(0, 100), Read::Lost { from: 0, to: 2 });
        assert_eq!(bytes(r.read(2, 100)), (b"cdefghijkl".to_vec(), 12));
        assert_eq!(bytes(r.read(6, 100)), (b"ghijkl".to_vec(), 12));
        // More than the ring holds at once: the last `capacity` stay.
        r.push(b"0123456789ABCDEF");
        assert_eq!((r.start(), r.end()), (18, 28));
        assert_eq!(bytes(r.read(18, 100)), (b"6789ABCDEF".to_vec(), 28));
        assert_eq!(r.read(12, 100), Read::Lost { from: 12, to: 18 });
    }

    /// A client that lost the start of a character does not get its rest:
    /// it goes on from the next character, and learns it lost the rest too.
    #[test]
    fn after_a_loss_reading_resumes_at_a_character() {
        let mut r = Ring::new(8);
        // Bytes 0-4 "ab€", 5-10 "€cde": the window keeps 3-10, and byte 3
        // is inside the first €.
        r.push("ab€".as_bytes());
        r.push("€cde".as_bytes());
        assert_eq!((r.start(), r.end()), (3, 11));
        assert_eq!(r.read(0, 100), Read::Lost { from: 0, to: 5 });
        assert_eq!(bytes(r.read(5, 100)), ("€cde".as_bytes().to_vec(), 11));
        // The window at a character's first byte: nothing more is skipped.
        r.push(b"fg");
        assert_eq!(r.start(), 5);
        assert_eq!(r.read(0, 100), Read::Lost { from: 0, to: 5 });
        // Bytes that are not UTF-8 at all: at most three are skipped.
        let mut raw = Ring::new(4);
        raw.push(&[b'x', 0x80, 0x80, 0x80, 0x80, 0x80, b'y']);
        assert_eq!(raw.read(0, 100), Read::Lost { from: 0, to: 6 });
    }

    /// Text of one- to four-byte characters, pushed in pieces cut at every
    /// offset and read in frames of every size: no frame ends inside a
    /// character (each decodes alone), and the frames make the text.
    #[test]
    fn no_frame_splits_a_character() {
        // Under Miri (`cargo +nightly miri test -p termio --lib ring::`),
        // which interprets every step, one round of the text.
        let text = "aé€😀b€é😀😀x".repeat(if cfg!(miri) { 1 } else { 3 });
        let all = text.as_bytes();
        for cut in 0..all.len() {
            for max in 1..if cfg!(miri) { 6 } else { 12 } {
                let mut r = Ring::new(256);
                let mut got = Vec::new();
                let mut cursor = 0;
                for part in [&all[..cut], &all[cut..]] {
                    r.push(part);
                    while let Read::Bytes {
                        first,
                        second,
                        next,
                    } = r.read(cursor, max)
                    {
                        let frame = [first, second].concat();
                        assert!(std::str::from_utf8(&frame).is_ok(), "{frame:?}");
                        got.extend_from_slice(&frame);
                        cursor = next;
                    }
                }
                assert_eq!(got, all, "cut at {cut}, frames of {max}");
            }
        }
    }

    /// Bytes that are not UTF-8 are not held back: a lone lead byte with a
    /// non-continuation after it, or stray continuation bytes, go out.
    #[test]
    fn bytes_that_are_not_utf8_go_as_they_are() {
        assert_eq!(incomplete_tail(b"ab\xE2\x82"), 2);
        assert_eq!(incomplete_tail(b"ab\xF0"), 1);
        assert_eq!(incomplete_tail(b"\xE2\x82\xAC"), 0);
        assert_eq!(incomplete_tail(b"a\xE2a"), 0);
        assert_eq!(incomplete_tail(b"\x80\x80\x80"), 0);
        assert_eq!(incomplete_tail(b"\xFF"), 0);
        let mut r = Ring::new(16);
        r.push(b"\xE2a\x80\xFF");
        assert_eq!(bytes(r.read(0, 100)), (b"\xE2a\x80\xFF".to_vec(), 4));
    }
}
