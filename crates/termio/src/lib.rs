//! termio: a PTY relayed to browser terminals, with the whole data path in
//! Rust (issue 15). The Node addon above it is still to come:
//! - [`pty`]: a command in a new PTY and a new session, resized, signalled
//!   as a process group, and reaped.
//! - [`ring`]: the PTY's output as a bounded window of a byte stream, each
//!   byte with its offset in the stream, read by many clients at their own
//!   cursors, in frames that never split a UTF-8 sequence.
//! - [`session`]: on tokio, one reader fills the ring while some viewer
//!   has room (else the child's writes block), viewers read at their own
//!   cursors, input goes straight to the PTY, and the end comes after all
//!   the output.
//! - [`plan`]: plan-mode markers in an agent's output, found incrementally
//!   through escape sequences and across chunks.
//! - [`relay`]: browser terminals over WebSocket (tokio-tungstenite):
//!   Host, Origin and the token checked before anything is spawned,
//!   output in binary frames, coalesced only while it floods.

#[cfg(feature = "node")]
pub mod node;
pub mod plan;
pub mod pty;
pub mod relay;
pub mod ring;
pub mod session;
