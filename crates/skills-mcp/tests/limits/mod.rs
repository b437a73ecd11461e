//! Hostile peers against the transports, for real: raw TCP on 127.0.0.1
//! against [`HttpServer`] (slowloris connections, session floods, slow
//! bodies, foreign origins) and raw lines against [`serve_io`] (messages
//! nested too deep). Each test says which limit it checks; none measures
//! time, and each is bounded by [`LIVENESS`] so a hang fails instead of
//! blocking the run.

use std::net::SocketAddr;
use std::time::Duration;

use skills_mcp::{HttpOptions, HttpServer, serve_io};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::TcpStream;

use super::{fixture, server_for};

/// How long any single step may take before the test fails as hung.
const LIVENESS: Duration = Duration::from_secs(30);

async fn live<F: std::future::Future>(what: &str, future: F) -> F::Output {
    tokio::time::timeout(LIVENESS, future)
        .await
        .unwrap_or_else(|_| panic!("hung: {what}"))
}

/// [`HttpServer`] on a free loopback port over the fixture, with `options`.
async fn serve(
    options: impl FnOnce(HttpOptions) -> HttpOptions,
) -> (tempfile::TempDir, HttpServer) {
    let dir = fixture();
    let server = server_for(dir.path(), 100).await;
    let options = options(HttpOptions::new("127.0.0.1:0".parse().unwrap()));
    let http = HttpServer::bind(server, options).await.unwrap();
    (dir, http)
}

/// One answer read to the end of a `Connection: close` exchange.
#[derive(Debug)]
struct Reply {
    status: u16,
    head: String,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }
}

fn parse_reply(raw: &[u8]) -> Reply {
    let text = String::from_utf8_lossy(raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Reply {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    }
}

fn request_text(method: &str, headers: &[(&str, &str)], body: &str, close: bool) -> String {
    let mut text = format!("{method} /mcp HTTP/1.1\r\n");
    let has = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    if !has("host") {
        text.push_str("Host: 127.0.0.1\r\n");
    }
    if !has("accept") {
        text.push_str("Accept: application/json, text/event-stream\r\n");
    }
    if method == "POST" {
        text.push_str("Content-Type: application/json\r\n");
    }
    for (key, value) in headers {
        text.push_str(&format!("{key}: {value}\r\n"));
    }
    if close {
        text.push_str("Connection: close\r\n");
    }
    text.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    text
}

/// A request on a new connection, read to the end.
async fn exchange(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    live("an exchange", async {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(request_text(method, headers, body, true).as_bytes())
            .await
            .unwrap();
        let mut raw = Vec::new();
        let _ = stream.read_to_end(&mut raw).await;
        parse_reply(&raw)
    })
    .await
}

fn initialize_body() -> String {
    serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    })
    .to_string()
}

/// A session, handshake complete; its id.
async fn open_session(addr: SocketAddr) -> String {
    let reply = exchange(addr, "POST", &[], &initialize_body()).await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let id = reply
        .header("mcp-session-id")
        .unwrap_or_else(|| panic!("no session id: {reply:?}"))
        .to_owned();
    let done = exchange(
        addr,
        "POST",
        &[("Mcp-Session-Id", &id)],
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert_eq!(done.status, 202, "{done:?}");
    id
}

async fn ping(addr: SocketAddr, session: &str) -> Reply {
    exchange(
        addr,
        "POST",
        &[("Mcp-Session-Id", session)],
        r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#,
    )
    .await
}

/// The session's event stream (`GET`), held open: the connection stays
/// busy while the returned stream lives.
async fn hold_event_stream(addr: SocketAddr, session: &str) -> TcpStream {
    live("opening an event stream", async {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let text = request_text(
            "GET",
            &[("Accept", "text/event-stream"), ("Mcp-Session-Id", session)],
            "",
            false,
        );
        stream.write_all(text.as_bytes()).await.unwrap();
        let mut head = vec![0u8; 512];
        let n = stream.read(&mut head).await.unwrap();
        let reply = parse_reply(&head[..n]);
        assert_eq!(reply.status, 200, "{reply:?}");
        stream
    })
    .await
}

/// Limit: the session cap. 300 `initialize` requests against a cap of 8
/// leave at most 8 sessions: the least recently used idle ones make room,
/// a busy one (its event stream open) survives the flood, and an evicted
/// client gets 404 (its cue to start again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_flood_evicts_idle_sessions_and_spares_busy_ones() {
    let (_dir, http) = serve(|options| options.max_sessions(8)).await;
    let addr = http.local_addr();
    let busy = open_session(addr).await;
    let _stream = hold_event_stream(addr, &busy).await;
    let idle = open_session(addr).await;
    for _ in 0..300 {
        let reply = exchange(addr, "POST", &[], &initialize_body()).await;
        assert_eq!(reply.status, 200, "{reply:?}");
        assert!(
            http.open_sessions() <= 8,
            "{} sessions",
            http.open_sessions()
        );
    }
    assert_eq!(http.open_sessions(), 8);
    let reply = ping(addr, &busy).await;
    assert_eq!(reply.status, 200, "the busy session survives: {reply:?}");
    assert!(reply.body.contains("\"result\""), "{reply:?}");
    assert_eq!(
        ping(addr, &idle).await.status,
        404,
        "the idle one was evicted"
    );
    http.shutdown().await;
}

/// Limit: the session cap, when every session is busy: a new `initialize`
/// gets 503 with `Retry-After`, and the busy sessions keep working.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_session_is_refused_when_every_session_is_busy() {
    let (_dir, http) = serve(|options| options.max_sessions(2)).await;
    let addr = http.local_addr();
    let mut held = Vec::new();
    let mut sessions = Vec::new();
    for _ in 0..2 {
        let id = open_session(addr).await;
        held.push(hold_event_stream(addr, &id).await);
        sessions.push(id);
    }
    let reply = exchange(addr, "POST", &[], &initialize_body()).await;
    assert_eq!(reply.status, 503, "{reply:?}");
    assert_eq!(reply.header("retry-after"), Some("1"));
    assert!(reply.body.contains("too many MCP sessions"), "{reply:?}");
    for id in &sessions {
        assert_eq!(ping(addr, id).await.status, 200);
    }
    // A stream closed makes its session idle again: room for a new one.
    drop(held.pop());
    live("room after a stream closed", async {
        loop {
            let reply = exchange(addr, "POST", &[], &initialize_body()).await;
            if reply.status == 200 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    http.shutdown().await;
}

/// Limit: the connection cap with idle eviction. 200 connections that never
/// finish their headers (header timeout far away) against a cap of 16: a
/// legitimate client is still served, because the longest idle connections
/// are closed to make room, and the server never holds more than 16.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slowloris_connections_do_not_lock_out_a_real_client() {
    let (_dir, http) = serve(|options| {
        options
            .max_connections(16)
            .header_read_timeout(Duration::from_secs(3600))
    })
    .await;
    let addr = http.local_addr();
    let mut loris = Vec::new();
    for _ in 0..200 {
        let mut stream = live("connect", TcpStream::connect(addr)).await.unwrap();
        stream
            .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            .await
            .unwrap();
        loris.push(stream);
    }
    let session = open_session(addr).await;
    assert_eq!(ping(addr, &session).await.status, 200);
    assert!(http.open_connections() <= 16, "{}", http.open_connections());
    // All but a few of the slow connections were closed by the server (the
    // closes travel on their own: look until they have all arrived).
    let mut open = loris;
    live("the slow connections closing", async {
        while open.len() > 20 {
            let mut still = Vec::new();
            for mut stream in open {
                let mut byte = [0u8; 1];
                let read = tokio::time::timeout(Duration::from_millis(1), stream.read(&mut byte));
                match read.await {
                    Ok(Ok(0) | Err(_)) => {}
                    _ => still.push(stream),
                }
            }
            open = still;
        }
    })
    .await;
    http.shutdown().await;
}

/// Limit: the header read timeout. A connection that stops mid-headers is
/// closed by the server once the timeout passes (no cap involved).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_never_finishes_its_headers_is_closed() {
    let (_dir, http) =
        serve(|options| options.header_read_timeout(Duration::from_millis(200))).await;
    let mut stream = TcpStream::connect(http.local_addr()).await.unwrap();
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .unwrap();
    let mut rest = Vec::new();
    live(
        "the server closing a slow connection",
        stream.read_to_end(&mut rest),
    )
    .await
    .unwrap();
    // A silent connection (not one byte sent) is closed the same way.
    let mut silent = TcpStream::connect(http.local_addr()).await.unwrap();
    let mut rest = Vec::new();
    live(
        "the server closing a silent connection",
        silent.read_to_end(&mut rest),
    )
    .await
    .unwrap();
    http.shutdown().await;
}

/// Limit: the body read timeout. Headers that promise 100 bytes, then 10:
/// 408 once the timeout passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_never_arrives_gets_408() {
    let (_dir, http) = serve(|options| options.body_read_timeout(Duration::from_millis(200))).await;
    let mut stream = TcpStream::connect(http.local_addr()).await.unwrap();
    stream
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
              Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"",
        )
        .await
        .unwrap();
    let mut lines = BufReader::new(stream).lines();
    let status = live("the 408", lines.next_line()).await.unwrap().unwrap();
    assert!(status.contains(" 408 "), "{status}");
    http.shutdown().await;
}

/// Limit: the connection cap when every connection is busy (event streams
/// open): a new connection gets 503 at once instead of waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_connection_is_refused_when_every_connection_is_busy() {
    let (_dir, http) = serve(|options| options.max_connections(2)).await;
    let addr = http.local_addr();
    let session = open_session(addr).await;
    let _one = hold_event_stream(addr, &session).await;
    let _two = hold_event_stream(addr, &session).await;
    let reply = exchange(addr, "POST", &[], &initialize_body()).await;
    assert_eq!(reply.status, 503, "{reply:?}");
    assert!(reply.body.contains("every connection is busy"), "{reply:?}");
    http.shutdown().await;
}

/// `Origin` (DNS rebinding): on loopback, pages of this machine and clients
/// without `Origin` are served; any other origin gets 403, unless allowed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foreign_origins_are_refused() {
    let (dir, http) = serve(|options| options.allow_origin("https://app.example.com")).await;
    let addr = http.local_addr();
    let status = |origin: Option<&'static str>| {
        let body = initialize_body();
        async move {
            let headers: Vec<(&str, &str)> = origin.map(|o| ("Origin", o)).into_iter().collect();
            exchange(addr, "POST", &headers, &body).await.status
        }
    };
    assert_eq!(status(None).await, 200);
    assert_eq!(status(Some("http://localhost:5173")).await, 200);
    assert_eq!(status(Some("http://127.0.0.1:8080")).await, 200);
    assert_eq!(status(Some("https://app.example.com")).await, 200);
    assert_eq!(status(Some("http://evil.example")).await, 403);
    assert_eq!(
        status(Some("https://app.example.com.evil.example")).await,
        403
    );
    assert_eq!(status(Some("null")).await, 403);
    assert_eq!(status(Some("not an origin")).await, 403);
    // A rebinding page also names itself in Host.
    let reply = exchange(
        addr,
        "POST",
        &[("Host", "evil.example")],
        &initialize_body(),
    )
    .await;
    assert_ne!(reply.status, 200, "{reply:?}");
    let err = HttpServer::bind(
        server_for(dir.path(), 100).await,
        HttpOptions::new("127.0.0.1:0".parse().unwrap()).allow_origin("app.example.com"),
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind(), skills_mcp::ErrorKind::Config);
    http.shutdown().await;
}

/// A shutdown lets a request in flight finish: its answer arrives in full.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_waits_for_requests_in_flight() {
    let (_dir, http) = serve(|options| options).await;
    let addr = http.local_addr();
    let session = open_session(addr).await;
    // A request whose body is still on its way when the shutdown starts.
    let body = r#"{"jsonrpc":"2.0","id":5,"method":"skills/list"}"#;
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let text = request_text("POST", &[("Mcp-Session-Id", &session)], body, true);
    let (head, tail) = text.split_at(text.len() - 10);
    stream.write_all(head.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let shutdown = tokio::spawn(http.shutdown());
    tokio::time::sleep(Duration::from_millis(100)).await;
    stream.write_all(tail.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    live("the answer", stream.read_to_end(&mut raw))
        .await
        .unwrap();
    let reply = parse_reply(&raw);
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.body.contains("\"skills\""), "{reply:?}");
    live("the shutdown", shutdown).await.unwrap();
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "no longer listening"
    );
}

/// stdio: a message nested deeper than the limit gets an answer (it used
/// to get none at all), with its id; one at the limit is served; and the
/// session goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deeply_nested_messages_get_an_answer_on_stdio() {
    let dir = fixture();
    let server = server_for(dir.path(), 100).await;
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    let task = tokio::spawn(async move { serve_io(&server, server_read, server_write).await });
    let (client_read, mut client_write) = tokio::io::split(client_io);
    let nest = |depth: usize| {
        let mut value = "1".to_owned();
        for _ in 0..depth {
            value = format!("[{value}]");
        }
        value
    };
    let max = skills_mcp::MAX_JSON_DEPTH;
    let lines = [
        initialize_body(),
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(),
        // Depth counts the message object and `params`: 2 + the nesting.
        format!(
            r#"{{"jsonrpc":"2.0","id":2,"method":"ping","params":{{"x":{}}}}}"#,
            nest(max - 2)
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"ping","params":{{"x":{}}}}}"#,
            nest(126)
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":"four","method":"ping","params":{{"x":{}}}}}"#,
            nest(100_000)
        ),
        format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"x":{}}}}}"#,
            nest(500)
        ),
        nest(300),
        r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#.to_owned(),
    ];
    let writer = tokio::spawn(async move {
        for line in &lines {
            client_write.write_all(line.as_bytes()).await.unwrap();
            client_write.write_all(b"\n").await.unwrap();
        }
        client_write
    });
    let mut reader = BufReader::new(client_read).lines();
    let mut answers = Vec::new();
    live("every answer", async {
        while !answers.iter().any(|a: &serde_json::Value| a["id"] == 6) || answers.len() < 6 {
            let line = reader.next_line().await.unwrap().unwrap();
            answers.push(serde_json::from_str(&line).unwrap());
        }
    })
    .await;
    let by_id = |id: serde_json::Value| {
        answers
            .iter()
            .find(|a| a["id"] == id)
            .unwrap_or_else(|| panic!("no answer for {id}: {answers:?}"))
    };
    assert!(
        by_id(2.into())["result"].is_object(),
        "at the limit: served"
    );
    assert_eq!(by_id(3.into())["error"]["code"], -32600);
    assert_eq!(by_id("four".into())["error"]["code"], -32600);
    assert!(by_id(6.into())["result"].is_object());
    // The bare deep array has no id: an error with id null.
    assert!(
        answers
            .iter()
            .any(|a| a["id"].is_null() && a["error"]["code"] == -32600),
        "{answers:?}"
    );
    // The notification got nothing: initialize, 2, 3, four, the array, 6.
    assert_eq!(answers.len(), 6, "{answers:?}");
    drop(writer.await.unwrap());
    drop(reader);
    assert_eq!(live("the end", task).await.unwrap(), Ok(()));
}
