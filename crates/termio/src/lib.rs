//! termio: a PTY relayed to browser terminals, with the whole data path in
//! Rust (issue 15). This is its core, below the WebSocket relay and the
//! Node addon that are still to come:
//! - [`pty`]: a command in a new PTY and a new session, resized, signalled
//!   as a process group, and reaped.
//! - [`ring`]: the PTY's output as a bounded window of a byte stream, each
//!   byte with its offset in the stream, read by many clients at their own
//!   cursors, in frames that never split a UTF-8 sequence.
//! - [`session`]: on tokio, one reader fills the ring while some viewer
//!   has room (else the child's writes block), viewers read at their own
//!   cursors, input goes straight to the PTY, and the end comes after all
//!   the output.

pub mod pty;
pub mod ring;
pub mod session;
