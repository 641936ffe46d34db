//! termio: what a browser sends (the upgrade request, the messages after
//! it), and what a program writes (the ring, the plan detector, UTF-8
//! framing).
//!
//! The network targets drive one real relay, started on first use, over
//! real TCP connections: a panic in any of its tasks aborts the process
//! (libFuzzer's panic hook; the corpus test sets the same).

use std::io::{Read as _, Write as _};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::OnceLock;
use std::time::Duration;
use termio::relay::{Config, Relay};
use termio::ring::{Read, Ring, incomplete_tail};

/// The token the fuzzed relay takes (its seeds carry it).
pub const TOKEN: &str = "0123456789abcdef0123456789abcdef";
/// The Host and Origin it accepts.
pub const HOST: &str = "fuzz.test";
pub const ORIGIN: &str = "http://fuzz.test";
/// How long one input may keep the relay busy before it counts as a hang.
const HANG: Duration = Duration::from_secs(10);

struct Served {
    addr: SocketAddr,
    _rt: tokio::runtime::Runtime,
}

fn relay() -> &'static Served {
    static RELAY: OnceLock<Served> = OnceLock::new();
    RELAY.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let mut cfg = Config::new(
            termio::pty::Command::new("/bin/true"),
            TOKEN.into(),
            vec![ORIGIN.into()],
        );
        cfg.allowed_hosts = vec![HOST.into()];
        cfg.hello_time = Duration::from_millis(500);
        cfg.idle = Duration::from_millis(100);
        let r = rt
            .block_on(Relay::bind("127.0.0.1:0".parse().expect("an address"), cfg))
            .expect("the relay binds");
        let addr = r.local_addr().expect("its address");
        rt.spawn(r.serve());
        Served { addr, _rt: rt }
    })
}

/// Sends `bytes` on a new connection, ends the sending side, and reads
/// until the relay closes: it must, within [`HANG`].
fn exchange(bytes: &[u8]) {
    let mut s = TcpStream::connect(relay().addr).expect("the relay accepts");
    s.set_read_timeout(Some(HANG)).expect("a timeout");
    // The relay may refuse and close before it has read everything.
    let _ = s.write_all(bytes);
    let _ = s.shutdown(Shutdown::Write);
    let mut sink = [0u8; 4096];
    loop {
        match s.read(&mut sink) {
            Ok(0) => return,
            Ok(_) => {}
            // A read timeout is `WouldBlock` on Linux (`TimedOut` elsewhere).
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                panic!("the relay kept the connection open for {HANG:?}")
            }
            Err(_) => return,
        }
    }
}

/// Any bytes as an HTTP upgrade request: answered (accepted or refused)
/// and closed, never a crash or a connection left hanging.
pub fn termio_upgrade(data: &[u8]) {
    exchange(data);
}

/// A proper upgrade, then the input as WebSocket messages: each is a kind
/// byte (text, binary, ping, close), a length byte and that many bytes.
/// The seeds start with a valid hello, so sessions are made and fed.
pub fn termio_messages(data: &[u8]) {
    let key = "dGhlIHNhbXBsZSBub25jZQ==";
    let mut wire = format!(
        "GET / HTTP/1.1\r\nHost: {HOST}\r\nOrigin: {ORIGIN}\r\nUpgrade: websocket\r\n\
         Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    .into_bytes();
    let mut rest = data;
    while let [kind, len, tail @ ..] = rest {
        let n = (*len as usize).min(tail.len());
        let (payload, after) = tail.split_at(n);
        let opcode = match kind & 3 {
            0 => 0x1,
            1 => 0x2,
            2 => 0x9,
            _ => 0x8,
        };
        frame(&mut wire, opcode, payload);
        rest = after;
    }
    exchange(&wire);
}

/// One masked client frame (RFC 6455 §5.2), whole (FIN set).
fn frame(out: &mut Vec<u8>, opcode: u8, payload: &[u8]) {
    let mask = [0x12u8, 0x34, 0x56, 0x78];
    out.push(0x80 | opcode);
    match payload.len() {
        n if n < 126 => out.push(0x80 | n as u8),
        n => {
            out.push(0x80 | 126);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
    }
    out.extend_from_slice(&mask);
    out.extend(payload.iter().zip(mask.iter().cycle()).map(|(b, m)| b ^ m));
}

/// A ring against a model: the whole stream kept in a `Vec`. Each step
/// is two bytes: an operation and its argument. Pushes add bytes; reads
/// by a client must return exactly the stream from its cursor (or say
/// what was lost, exactly what left the window), never end inside a
/// UTF-8 character that is whole in the stream, and never skip a byte.
pub fn termio_ring(data: &[u8]) {
    let Some((&cap, mut ops)) = data.split_first() else {
        return;
    };
    let cap = (cap as usize % 64) + 1;
    let mut ring = Ring::new(cap);
    let mut stream: Vec<u8> = Vec::new();
    let mut cursor = 0u64;
    let mut seen: Vec<u8> = Vec::new();
    let mut lost = 0u64;
    let mut filler = 0u8;
    while let [op, arg, rest @ ..] = ops {
        ops = rest;
        match op % 4 {
            // Push `arg` bytes of a stream that mixes ASCII and multibyte
            // characters (and, now and then, bytes that are not UTF-8).
            0 | 1 => {
                let n = *arg as usize % 40;
                let mut bytes = Vec::with_capacity(n);
                for i in 0..n {
                    filler = filler.wrapping_add(1);
                    match (filler ^ op) % 7 {
                        0 => bytes.extend_from_slice("é".as_bytes()),
                        1 => bytes.extend_from_slice("€".as_bytes()),
                        2 => bytes.extend_from_slice("😀".as_bytes()),
                        3 if i % 5 == 0 => bytes.push(0xE2),
                        _ => bytes.push(b'a' + filler % 26),
                    }
                }
                ring.push(&bytes);
                stream.extend_from_slice(&bytes);
            }
            // A client reads at most `arg` bytes.
            2 => {
                let max = *arg as usize;
                match ring.read(cursor, max) {
                    Read::Lost { from, to } => {
                        assert_eq!(from, cursor, "lost from the client's cursor");
                        // Up to the window's start, and past the rest of a
                        // character whose start left it.
                        let skipped = &stream[ring.start() as usize..to as usize];
                        assert!(
                            skipped.len() <= 3 && skipped.iter().all(|b| b & 0xC0 == 0x80),
                            "lost up to {to}, the window starts at {}",
                            ring.start()
                        );
                        assert!(to > from);
                        lost += to - from;
                        cursor = to;
                    }
                    Read::Bytes {
                        first,
                        second,
                        next,
                    } => {
                        let got = [first, second].concat();
                        assert_eq!(next, cursor + got.len() as u64);
                        assert_eq!(
                            got,
                            stream[cursor as usize..next as usize],
                            "the bytes at the cursor"
                        );
                        assert!(got.len() <= max.max(4), "{} bytes for max {max}", got.len());
                        assert!(
                            !cuts_a_character(&stream, next as usize),
                            "a frame ends inside a character"
                        );
                        seen.extend_from_slice(&got);
                        cursor = next;
                    }
                    Read::Empty => {
                        let left = &stream[(cursor as usize).min(stream.len())..];
                        assert!(
                            left.is_empty() || incomplete_tail(left) == left.len(),
                            "nothing to read with {} bytes left",
                            left.len()
                        );
                    }
                }
            }
            // The stream's end: what is left goes whole.
            _ => {
                if cursor < ring.start() {
                    lost += ring.start() - cursor;
                    cursor = ring.start();
                }
                let (a, b) = ring.rest(cursor);
                let got = [a, b].concat();
                assert_eq!(got, stream[cursor as usize..], "the rest");
                seen.extend_from_slice(&got);
                cursor = ring.end();
            }
        }
        assert_eq!(ring.end(), stream.len() as u64);
        assert_eq!(
            seen.len() as u64 + lost,
            cursor,
            "every byte before the cursor was read or reported lost"
        );
    }
}

/// Whether a frame that ends at `at` cuts a character of `stream` in two:
/// the bytes before `at` start a sequence that the bytes after it complete.
/// (A lead byte that nothing completes is not UTF-8: it goes as it is.)
fn cuts_a_character(stream: &[u8], at: usize) -> bool {
    let k = incomplete_tail(&stream[..at]);
    if k == 0 {
        return false;
    }
    let start = at - k;
    let need = match stream[start] {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    };
    stream
        .get(start..start + need)
        .is_some_and(|c| std::str::from_utf8(c).is_ok())
}

/// The plan detector reports the same events however the same output is
/// cut into reads. The first byte picks the cuts' seed.
pub fn termio_detector(data: &[u8]) {
    let Some((&seed, text)) = data.split_first() else {
        return;
    };
    let mut whole = termio::plan::Detector::with_builtin_markers();
    let expected = whole.feed(text);
    let mut cut = termio::plan::Detector::with_builtin_markers();
    let mut got = Vec::new();
    let mut at = 0;
    let mut step = seed as usize;
    while at < text.len() {
        step = step.wrapping_mul(31).wrapping_add(7);
        let n = (step % 17 + 1).min(text.len() - at);
        got.extend(cut.feed(&text[at..at + n]));
        at += n;
    }
    assert_eq!(got, expected, "events depend on where the reads were cut");
}

/// UTF-8 framing as the relay does it: a stream (the input) goes into a
/// large ring in reads cut at the input's own choice, a client takes
/// frames of various sizes: no frame ends inside a character that the
/// stream holds whole, and the frames plus the rest are the stream.
pub fn termio_utf8(data: &[u8]) {
    let Some((&seed, text)) = data.split_first() else {
        return;
    };
    let mut ring = Ring::new(text.len().max(1));
    let mut out = Vec::new();
    let mut cursor = 0u64;
    let mut step = seed as usize;
    let mut at = 0;
    while at < text.len() {
        step = step.wrapping_mul(131).wrapping_add(17);
        let n = (step % 23 + 1).min(text.len() - at);
        ring.push(&text[at..at + n]);
        at += n;
        loop {
            match ring.read(cursor, step % 9 + 1) {
                Read::Bytes {
                    first,
                    second,
                    next,
                } => {
                    let frame = [first, second].concat();
                    let whole_after = std::str::from_utf8(&text[..next as usize]).is_ok()
                        && std::str::from_utf8(&text[cursor as usize..next as usize]).is_ok();
                    if std::str::from_utf8(text).is_ok() {
                        assert!(
                            whole_after,
                            "a frame of valid UTF-8 ends inside a character"
                        );
                    }
                    out.extend_from_slice(&frame);
                    cursor = next;
                }
                Read::Empty => break,
                Read::Lost { .. } => panic!("a ring as large as the stream lost bytes"),
            }
        }
    }
    let (a, b) = ring.rest(cursor);
    out.extend_from_slice(a);
    out.extend_from_slice(b);
    assert_eq!(out, text, "the frames and the rest are the stream");
}
