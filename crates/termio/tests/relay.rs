//! The relay over real TCP with real children, driven by a WebSocket
//! client (tungstenite's).

use futures_util::{SinkExt, StreamExt};
use std::net::SocketAddr;
use std::time::Duration;
use termio::pty::Command;
use termio::relay::{ClientMessage, Config, Handle, Relay, ServerMessage, close, new_token};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

type Ws = tokio_tungstenite::WebSocketStream<TcpStream>;

const ORIGIN: &str = "http://app.test";

async fn start(cmd: Command, tune: impl FnOnce(&mut Config)) -> (SocketAddr, Handle, String) {
    let token = new_token().unwrap();
    let mut config = Config::new(cmd, token.clone(), vec![ORIGIN.into()]);
    tune(&mut config);
    let relay = Relay::bind("127.0.0.1:0".parse().unwrap(), config)
        .await
        .unwrap();
    let (addr, handle) = (relay.local_addr().unwrap(), relay.handle());
    tokio::spawn(relay.serve());
    (addr, handle, token)
}

/// A WebSocket to the relay at `addr`, with `path`, and these Host and
/// Origin headers (None: left out).
async fn open(
    addr: SocketAddr,
    path: &str,
    host: Option<&str>,
    origin: Option<&str>,
) -> Result<Ws, tokio_tungstenite::tungstenite::Error> {
    let mut req = format!("ws://{addr}{path}").into_client_request().unwrap();
    let h = req.headers_mut();
    match host {
        Some(v) => drop(h.insert("host", v.parse().unwrap())),
        None => drop(h.remove("host")),
    }
    if let Some(o) = origin {
        h.insert("origin", o.parse().unwrap());
    }
    let stream = TcpStream::connect(addr).await.unwrap();
    Ok(tokio_tungstenite::client_async(req, stream).await?.0)
}

async fn connect(addr: SocketAddr) -> Ws {
    let host = addr.to_string();
    open(addr, "/", Some(&host), Some(ORIGIN)).await.unwrap()
}

async fn send(ws: &mut Ws, m: &ClientMessage) {
    ws.send(Message::Text(serde_json::to_string(m).unwrap().into()))
        .await
        .unwrap();
}

fn hello(token: &str) -> ClientMessage {
    ClientMessage::Hello {
        token: token.into(),
        cols: None,
        rows: None,
        session: None,
        seq: None,
    }
}

/// A `hello` that resumes `session` from `seq` (its oldest kept byte if
/// `None`).
fn resume(token: &str, session: &str, seq: Option<u64>) -> ClientMessage {
    ClientMessage::Hello {
        token: token.into(),
        cols: None,
        rows: None,
        session: Some(session.into()),
        seq,
    }
}

/// The relay's next message: output bytes, or a control message.
async fn next(ws: &mut Ws) -> Option<Result<Vec<u8>, ServerMessage>> {
    loop {
        match ws.next().await? {
            Ok(Message::Binary(b)) => return Some(Ok(b.to_vec())),
            Ok(Message::Text(t)) => return Some(Err(serde_json::from_str(&t).unwrap())),
            Ok(Message::Close(_)) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

/// The close code the relay ends the connection with.
async fn close_code(ws: &mut Ws) -> Option<CloseCode> {
    while let Some(m) = ws.next().await {
        match m {
            Ok(Message::Close(f)) => return f.map(|f| f.code),
            Ok(_) => {}
            Err(_) => return None,
        }
    }
    None
}

fn raw_cat() -> Command {
    let mut c = Command::new("cat");
    c.raw = true;
    c
}

/// A bad Origin, a bad or missing Host, a wrong path, a token in the URL:
/// refused in the HTTP upgrade. A wrong token, a first message that is not
/// hello, no hello in time: closed with the relay's codes. None spawns a
/// process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_spawn_nothing() {
    let (addr, handle, token) =
        start(raw_cat(), |c| c.hello_time = Duration::from_millis(300)).await;
    let host = addr.to_string();
    let status = |e: tokio_tungstenite::tungstenite::Error| match e {
        tokio_tungstenite::tungstenite::Error::Http(r) => r.status().as_u16(),
        other => panic!("{other:?}"),
    };
    let refused = [
        open(addr, "/", Some(&host), Some("http://evil.test")).await,
        open(addr, "/", Some(&host), None).await,
        open(addr, "/", Some("evil.test"), Some(ORIGIN)).await,
        open(addr, "/other", Some(&host), Some(ORIGIN)).await,
        open(addr, &format!("/?token={token}"), Some(&host), Some(ORIGIN)).await,
    ];
    let codes: Vec<u16> = refused
        .into_iter()
        .map(|r| status(r.unwrap_err()))
        .collect();
    assert_eq!(codes, [403, 403, 403, 404, 400]);

    let mut ws = connect(addr).await;
    send(&mut ws, &hello("0123456789abcdef0123456789abcdef")).await;
    assert_eq!(
        close_code(&mut ws).await,
        Some(CloseCode::Library(close::UNAUTHORIZED))
    );
    let mut ws = connect(addr).await;
    let wrong_length = format!("{token}0");
    send(&mut ws, &hello(&wrong_length)).await;
    assert_eq!(
        close_code(&mut ws).await,
        Some(CloseCode::Library(close::UNAUTHORIZED))
    );
    let mut ws = connect(addr).await;
    send(&mut ws, &ClientMessage::Resize { cols: 1, rows: 1 }).await;
    assert_eq!(
        close_code(&mut ws).await,
        Some(CloseCode::Library(close::BAD_HELLO))
    );
    let mut ws = connect(addr).await;
    assert_eq!(
        close_code(&mut ws).await,
        Some(CloseCode::Library(close::NO_HELLO))
    );

    assert_eq!(handle.spawned(), 0);
    assert_eq!(handle.refused(), 9);
    assert!(handle.sessions().is_empty());
}

/// Input goes to the PTY, its output comes back; a resize reaches the
/// terminal; the exit code comes after all the output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_runs_resizes_and_exits() {
    let cmd = Command::new("/bin/sh")
        .arg("-c")
        .arg("read x; stty size; exit 3");
    let (addr, handle, token) = start(cmd, |_| {}).await;
    let mut ws = connect(addr).await;
    send(&mut ws, &hello(&token)).await;
    let Some(Err(ServerMessage::Hello { session, seq: 0 })) = next(&mut ws).await else {
        panic!("no hello");
    };
    assert_eq!(handle.sessions()[0].id, session);
    send(
        &mut ws,
        &ClientMessage::Resize {
            cols: 100,
            rows: 30,
        },
    )
    .await;
    ws.send(Message::Binary(b"go\r".to_vec().into()))
        .await
        .unwrap();
    let mut out = Vec::new();
    let code = loop {
        match next(&mut ws).await.unwrap() {
            Ok(b) => out.extend_from_slice(&b),
            Err(ServerMessage::Exit { code }) => break code,
            Err(other) => panic!("{other:?}"),
        }
    };
    assert_eq!(code, 3);
    assert_eq!(String::from_utf8(out).unwrap(), "go\r\n30 100\r\n");
    assert_eq!(handle.spawned(), 1);
}

/// A client that comes back with its session and the sequence number it
/// had gets exactly the bytes it missed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnect_gets_exactly_what_it_missed() {
    let (addr, handle, token) = start(raw_cat(), |_| {}).await;
    let mut a = connect(addr).await;
    send(&mut a, &hello(&token)).await;
    let Some(Err(ServerMessage::Hello { session, .. })) = next(&mut a).await else {
        panic!("no hello");
    };
    a.send(Message::Binary(b"abc".to_vec().into()))
        .await
        .unwrap();
    let mut got = Vec::new();
    while got.len() < 3 {
        got.extend(next(&mut a).await.unwrap().unwrap());
    }
    assert_eq!(got, b"abc");
    // More input, and the client leaves before its echo.
    a.send(Message::Binary("déf €".as_bytes().to_vec().into()))
        .await
        .unwrap();
    a.close(None).await.unwrap();
    drop(a);
    let mut b = connect(addr).await;
    send(&mut b, &resume(&token, &session, Some(3))).await;
    let Some(Err(ServerMessage::Hello {
        session: again,
        seq: 3,
    })) = next(&mut b).await
    else {
        panic!("no hello");
    };
    assert_eq!(again, session);
    let mut rest = Vec::new();
    while rest.len() < "déf €".len() {
        rest.extend(next(&mut b).await.unwrap().unwrap());
    }
    assert_eq!(rest, "déf €".as_bytes());
    assert_eq!(handle.spawned(), 1);
    handle.close_all();
}

/// A message over 1 MiB closes that connection (1009), and the session
/// goes on for another client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_message_is_refused() {
    let (addr, _handle, token) = start(raw_cat(), |_| {}).await;
    let mut ws = connect(addr).await;
    send(&mut ws, &hello(&token)).await;
    assert!(matches!(
        next(&mut ws).await,
        Some(Err(ServerMessage::Hello { .. }))
    ));
    let _ = ws
        .send(Message::Binary(vec![b'x'; (1 << 20) + 1].into()))
        .await;
    assert_eq!(close_code(&mut ws).await, Some(CloseCode::Size));
}

/// Past the bound on connections, a new one is closed with "try again
/// later" (1013); those waiting for their hello are closed when their time
/// is up, and a client is served again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_flood_gets_try_again_later() {
    let (addr, handle, token) = start(raw_cat(), |c| {
        c.max_connections = 8;
        c.hello_time = Duration::from_millis(500);
    })
    .await;
    let mut idle = Vec::new();
    for _ in 0..8 {
        idle.push(connect(addr).await);
    }
    let mut late = connect(addr).await;
    assert_eq!(close_code(&mut late).await, Some(CloseCode::Again));
    for mut ws in idle {
        assert_eq!(
            close_code(&mut ws).await,
            Some(CloseCode::Library(close::NO_HELLO))
        );
    }
    let mut ws = connect(addr).await;
    send(&mut ws, &hello(&token)).await;
    assert!(matches!(
        next(&mut ws).await,
        Some(Err(ServerMessage::Hello { .. }))
    ));
    assert_eq!(handle.spawned(), 1);
    handle.close_all();
}

/// 256 MiB of random bytes through `cat` and the relay come back exact,
/// the last byte too, though it may look like a character's start; in
/// frames of at most 256 KiB (the default, for one viewer).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_bytes_through_the_relay_come_back_exact() {
    const LEN: usize = 256 << 20;
    let mut data = vec![0u8; LEN];
    fastrand::Rng::with_seed(7).fill(&mut data);
    let data = std::sync::Arc::new(data);
    let (addr, handle, token) = start(raw_cat(), |_| {}).await;
    let ws = connect(addr).await;
    let (mut tx, mut rx) = ws.split();
    tx.send(Message::Text(
        serde_json::to_string(&hello(&token)).unwrap().into(),
    ))
    .await
    .unwrap();
    let sender = {
        let data = data.clone();
        tokio::spawn(async move {
            for chunk in data.chunks(64 << 10) {
                tx.send(Message::Binary(chunk.to_vec().into()))
                    .await
                    .unwrap();
            }
            tx
        })
    };
    let mut got = 0;
    while got < LEN {
        match rx.next().await.unwrap().unwrap() {
            Message::Binary(b) => {
                assert!(
                    b[..] == data[got..got + b.len()],
                    "bytes differ after {got}"
                );
                assert!(b.len() <= 256 << 10, "a frame of {} bytes", b.len());
                got += b.len();
            }
            Message::Text(t) => match serde_json::from_str(&t).unwrap() {
                ServerMessage::Hello { .. } => {}
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }
    drop(sender.await.unwrap());
    handle.close_all();
}

/// The process's resident memory, in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Reads the relay's messages until `deadline`: output bytes received.
async fn read_until(ws: &mut Ws, deadline: tokio::time::Instant) -> u64 {
    let mut n = 0;
    while let Ok(Some(m)) = tokio::time::timeout_at(deadline, next(ws)).await {
        if let Ok(b) = m {
            n += b.len() as u64;
        }
    }
    n
}

/// A client that stops reading for a minute under `yes` costs no more than
/// its cursor: the relay's memory stays bounded, and another client of the
/// same session keeps receiving all along.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_client_keeps_memory_bounded_and_others_receive() {
    let cmd = Command::new("yes");
    let (addr, handle, token) = start(cmd, |_| {}).await;
    let mut reader = connect(addr).await;
    send(&mut reader, &hello(&token)).await;
    let Some(Err(ServerMessage::Hello { session, .. })) = next(&mut reader).await else {
        panic!("no hello");
    };
    let mut stalled = connect(addr).await;
    send(&mut stalled, &resume(&token, &session, None)).await;
    // The stalled client never reads again. Warm up, then watch a minute.
    let t = tokio::time::Instant::now();
    read_until(&mut reader, t + Duration::from_secs(2)).await;
    let before = rss_kib();
    let mut per_second = Vec::new();
    for s in 1..=60 {
        per_second.push(read_until(&mut reader, t + Duration::from_secs(2 + s)).await);
    }
    let grown = rss_kib().saturating_sub(before);
    let slowest = *per_second.iter().min().unwrap();
    eprintln!(
        "a minute with a stalled client: grew {grown} KiB; the reader's slowest second {slowest} bytes"
    );
    assert!(
        grown < 32 << 10,
        "the relay grew by {grown} KiB with a stalled client"
    );
    assert!(
        slowest > 1 << 20,
        "a second with only {slowest} bytes for the reading client"
    );
    drop(stalled);
    handle.close_all();
}

/// Ctrl-C during `yes`: the output at the client stops within 100 ms.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_the_output_within_100_ms() {
    let cmd = Command::new("/bin/sh").arg("-c").arg("yes; sleep 1000");
    let (addr, handle, token) = start(cmd, |_| {}).await;
    let mut ws = connect(addr).await;
    send(&mut ws, &hello(&token)).await;
    let mut seen = 0;
    while seen < 4 << 20 {
        if let Some(Ok(b)) = next(&mut ws).await {
            seen += b.len();
        }
    }
    ws.send(Message::Binary(vec![3u8].into())).await.unwrap();
    let sent = tokio::time::Instant::now();
    // Output goes on for what was already on its way, then stops: the last
    // byte of `yes` comes within 100 ms of the keystroke.
    let mut last = sent;
    while let Ok(Some(Some(Ok(b)))) =
        tokio::time::timeout(Duration::from_millis(500), next(&mut ws))
            .await
            .map(Some)
    {
        if b.windows(2).any(|w| w == b"y\r") {
            last = tokio::time::Instant::now();
        }
    }
    let took = last - sent;
    eprintln!("yes went on for {took:?} after Ctrl-C");
    assert!(
        took < Duration::from_millis(100),
        "yes went on for {took:?} after Ctrl-C"
    );
    handle.close_all();
}

/// A session whose clients have all left is closed after the idle time:
/// its program gets SIGHUP, the owner an exit event, and the session is
/// gone; one with a client stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_without_clients_is_closed_after_the_idle_time() {
    let (addr, handle, token) = start(raw_cat(), |c| c.idle = Duration::from_millis(300)).await;
    let mut kept = connect(addr).await;
    send(&mut kept, &hello(&token)).await;
    let Some(Err(ServerMessage::Hello {
        session: kept_id, ..
    })) = next(&mut kept).await
    else {
        panic!("no hello");
    };
    let mut left = connect(addr).await;
    send(&mut left, &hello(&token)).await;
    let Some(Err(ServerMessage::Hello {
        session: left_id, ..
    })) = next(&mut left).await
    else {
        panic!("no hello");
    };
    left.close(None).await.unwrap();
    drop(left);
    let event = tokio::time::timeout(Duration::from_secs(5), handle.next_event())
        .await
        .expect("no event within 5 s");
    assert_eq!(
        event,
        Some(termio::relay::RelayEvent::Exit {
            session: left_id,
            code: -1
        })
    );
    let ids: Vec<String> = handle.sessions().into_iter().map(|s| s.id).collect();
    assert_eq!(ids, [kept_id]);
    handle.close_all();
}

/// Plan-mode markers in the session's output reach its client as `plan`
/// messages, in order with the output around them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_markers_reach_the_client() {
    let script = "read x; printf '\\033[2mplan \\033[1mmode\\033[0m on\\r\\n'; \
                  printf \"Here is Claude's plan:\\r\\n1. Retry\\r\\nWould you like to proceed?\\r\\n\"; read y";
    let cmd = Command::new("/bin/sh").arg("-c").arg(script);
    let (addr, handle, token) = start(cmd, |_| {}).await;
    let mut ws = connect(addr).await;
    send(&mut ws, &hello(&token)).await;
    let Some(Err(ServerMessage::Hello { session, .. })) = next(&mut ws).await else {
        panic!("no hello");
    };
    ws.send(Message::Binary(b"go\r".to_vec().into()))
        .await
        .unwrap();
    let mut plans = Vec::new();
    while plans.len() < 4 {
        if let Some(Err(m)) = next(&mut ws).await {
            plans.push(m);
        }
    }
    let p = |marker: &str, text: Option<&str>| ServerMessage::Plan {
        agent: "claude-code".into(),
        marker: marker.into(),
        text: text.map(Into::into),
    };
    assert_eq!(
        plans,
        [
            p("entered", None),
            p("planStart", None),
            p("plan", Some("1. Retry")),
            p("planEnd", None),
        ]
    );
    // A client that joins later (a reload) learns where the agent stands:
    // its last marker and its plan, right after the hello.
    let mut late = connect(addr).await;
    send(&mut late, &resume(&token, &session, None)).await;
    assert!(matches!(
        next(&mut late).await,
        Some(Err(ServerMessage::Hello { .. }))
    ));
    let mut state = Vec::new();
    while let Ok(Some(Err(m))) = tokio::time::timeout(Duration::from_secs(2), next(&mut late)).await
    {
        state.push(m);
    }
    assert_eq!(state, [p("plan", Some("1. Retry")), p("planEnd", None)]);
    handle.close_all();
}

/// The idle time counts from the last client's leaving: a session left,
/// resumed and left again is still there a full idle time after the
/// first leaving, and is closed one idle time after the second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_idle_time_counts_from_the_last_client_leaving() {
    let idle = Duration::from_secs(1);
    let (addr, handle, token) = start(raw_cat(), |c| c.idle = idle).await;
    let mut a = connect(addr).await;
    send(&mut a, &hello(&token)).await;
    let Some(Err(ServerMessage::Hello { session, .. })) = next(&mut a).await else {
        panic!("no hello");
    };
    let first_left = tokio::time::Instant::now();
    a.close(None).await.unwrap();
    drop(a);
    tokio::time::sleep_until(first_left + idle / 2).await;
    let mut b = connect(addr).await;
    send(&mut b, &resume(&token, &session, None)).await;
    assert!(matches!(
        next(&mut b).await,
        Some(Err(ServerMessage::Hello { .. }))
    ));
    b.close(None).await.unwrap();
    drop(b);
    let second_left = tokio::time::Instant::now();
    tokio::time::sleep_until(first_left + idle + idle / 4).await;
    assert_eq!(
        handle.sessions().len(),
        1,
        "closed an idle time after the first leaving"
    );
    let event = tokio::time::timeout(idle * 3, handle.next_event())
        .await
        .unwrap();
    assert!(matches!(
        event,
        Some(termio::relay::RelayEvent::Exit { .. })
    ));
    assert!(
        second_left.elapsed() >= idle,
        "closed before an idle time after the last leaving"
    );
}

/// Under a flood, frames are held for the interval; but a keystroke's
/// echo, which comes after the frame its input released, is not: for the
/// echo window after input, output goes at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_echo_of_input_waits_for_no_interval_under_a_flood() {
    let mut cmd = Command::new("/bin/sh")
        .arg("-c")
        .arg("while :; do echo tick; sleep 0.005; done & exec cat");
    cmd.raw = true;
    let (addr, handle, token) = start(cmd, |c| c.interval = Duration::from_secs(1)).await;
    let mut ws = connect(addr).await;
    send(&mut ws, &hello(&token)).await;
    // Flooding: one frame a second.
    let mut frames = 0;
    let quiet = tokio::time::Instant::now() + Duration::from_millis(1500);
    while let Ok(Some(Some(Ok(_)))) = tokio::time::timeout_at(quiet, next(&mut ws))
        .await
        .map(Some)
    {
        frames += 1;
    }
    assert!(frames <= 3, "{frames} frames in 1.5 s with a 1 s interval");
    for probe in ["probe-1", "probe-2", "probe-3"] {
        ws.send(Message::Binary(probe.as_bytes().to_vec().into()))
            .await
            .unwrap();
        let sent = tokio::time::Instant::now();
        let mut seen = Vec::new();
        while !seen.windows(probe.len()).any(|w| w == probe.as_bytes()) {
            if let Some(Ok(b)) = next(&mut ws).await {
                seen.extend_from_slice(&b);
            }
        }
        let took = sent.elapsed();
        assert!(
            took < Duration::from_millis(500),
            "the echo of {probe} took {took:?}"
        );
        // Past the echo window, the interval holds again.
        tokio::time::sleep(Duration::from_millis(1100)).await;
    }
    handle.close_all();
}

/// A reconnect whose bytes have left the ring is told what it lost, and
/// the program in the foreground is asked to draw its screen again
/// (SIGWINCH, as a resize sends): here a shell loop that prints `redrawn`
/// when it gets one. Before, the lost bytes were only reported.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnect_past_the_ring_gets_the_program_to_redraw() {
    let script = "trap 'echo redrawn' WINCH; head -c 20000 /dev/zero | tr '\\0' x; echo; \
                  while :; do sleep 0.05; done";
    let cmd = Command::new("/bin/sh").arg("-c").arg(script);
    let (addr, handle, token) = start(cmd, |c| {
        c.session.ring = 4096;
        c.session.read = 1024;
    })
    .await;
    let mut a = connect(addr).await;
    send(&mut a, &hello(&token)).await;
    let Some(Err(ServerMessage::Hello { session, .. })) = next(&mut a).await else {
        panic!("no hello");
    };
    let mut seen = 0;
    while seen < 20000 {
        if let Some(Ok(b)) = next(&mut a).await {
            seen += b.len();
        }
    }
    drop(a);
    let mut b = connect(addr).await;
    send(&mut b, &resume(&token, &session, Some(0))).await;
    assert!(matches!(
        next(&mut b).await,
        Some(Err(ServerMessage::Hello { .. }))
    ));
    let Some(Err(ServerMessage::Lost { from: 0, to })) = next(&mut b).await else {
        panic!("not told of the loss");
    };
    assert!(to > 0);
    let mut out = Vec::new();
    while !out.windows(7).any(|w| w == b"redrawn") {
        match tokio::time::timeout(Duration::from_secs(5), next(&mut b)).await {
            Ok(Some(Ok(bytes))) => out.extend(bytes),
            Ok(Some(Err(_))) => {}
            _ => panic!(
                "no redraw: {:?}",
                String::from_utf8_lossy(&out[out.len().saturating_sub(80)..])
            ),
        }
    }
    // A page that reloads asks for all the session kept: the ring no longer
    // holds the start, so the program redraws for it too (a second apart:
    // redraws are at most one a second).
    tokio::time::sleep(Duration::from_millis(1100)).await;
    // (The ring still holds the first `redrawn`: a second one must come.)
    let mut c = connect(addr).await;
    send(&mut c, &resume(&token, &session, None)).await;
    let mut out = Vec::new();
    while out.windows(7).filter(|w| w == b"redrawn").count() < 2 {
        match tokio::time::timeout(Duration::from_secs(5), next(&mut c)).await {
            Ok(Some(Ok(bytes))) => out.extend(bytes),
            Ok(Some(Err(_))) => {}
            _ => panic!("no redraw on reload"),
        }
    }
    handle.close_all();
}

/// A program that writes in small pieces, thousands a second, while the
/// client types: within the echo window its output goes in frames at
/// least `echo_gap` apart, not a frame of tens of bytes for each read of
/// the PTY (whose cost at the client held the echo back: a p99.9 of 48 ms
/// under a 625 KB/s flood, against ttyd's 14).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_writes_in_the_echo_window_go_in_frames_a_gap_apart() {
    let mut cmd = Command::new("/usr/bin/python3")
        .arg("-c")
        .arg("import os, sys\nwhile True:\n    os.write(1, b'tick tock tick tock\\r\\n')\n");
    cmd.raw = true;
    let (addr, handle, token) = start(cmd, |c| {
        c.echo_window = Duration::from_secs(10);
        c.echo_gap = Duration::from_millis(5);
    })
    .await;
    let mut ws = connect(addr).await;
    send(&mut ws, &hello(&token)).await;
    ws.send(Message::Binary(b"x".to_vec().into()))
        .await
        .unwrap();
    let start = tokio::time::Instant::now();
    let until = start + Duration::from_millis(500);
    let (mut frames, mut bytes) = (0, 0);
    loop {
        match tokio::time::timeout_at(until, next(&mut ws)).await {
            Ok(Some(Ok(b))) => {
                frames += 1;
                bytes += b.len();
            }
            // The hello.
            Ok(Some(Err(_))) => {}
            _ => break,
        }
    }
    // 500 ms at 5 ms apart: 100 frames, and some slack for timers.
    assert!(
        frames <= 130,
        "{frames} frames ({bytes} bytes) in 500 ms with a 5 ms gap"
    );
    assert!(bytes > 100_000, "only {bytes} bytes in 500 ms");
    handle.close_all();
}
