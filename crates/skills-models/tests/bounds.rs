//! The HTTP adapters keep what a hostile model server sends within their
//! caps (`HttpOptions::max_answer_bytes`, `max_event_bytes`): real servers
//! on 127.0.0.1 that stream without end, send one endless line, or promise
//! a gigabyte, against the real adapters.
//!
//! Each check asserts the typed error, that the server could push at most
//! the cap plus the kernel's socket buffers before the adapter hung up, and
//! that the process's peak resident memory (`VmHWM`) grew by less than a
//! small multiple of the caps while the servers offered gigabytes. The peak
//! is process-wide, so this file holds a single test and nothing runs
//! beside it. No timing is asserted.
#![cfg(target_os = "linux")]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::thread::{self, JoinHandle};

use futures_util::StreamExt;
use skills_agent::{Message, Model, ModelError, ModelErrorKind, ModelEvent, ModelRequest};
use skills_models::{Anthropic, HttpOptions, OpenAiChat};

const MIB: usize = 1024 * 1024;
/// The caps of this test's adapters.
const ANSWER_CAP: usize = 8 * MIB;
const EVENT_CAP: usize = MIB;
/// What the kernel may hold between the two ends of a loopback connection
/// (both socket buffers at their largest), and the client's read buffer.
const IN_FLIGHT: usize = 32 * MIB;
/// What the servers stop at if the client never hangs up, so a broken
/// adapter fails the test instead of filling the machine.
const SAFETY_STOP: usize = 1024 * MIB;
/// How much the peak resident memory may grow over the whole test.
const MEMORY_BUDGET: usize = 64 * MIB;

/// What a server sends after the response head.
enum Body {
    /// `head`, then `piece` again and again.
    Endless { head: Vec<u8>, piece: Vec<u8> },
    /// `head`, then `total` bytes of `x` with no line end.
    GiantLine { head: Vec<u8>, total: usize },
}

/// A server on 127.0.0.1 that answers one request with `headers` and
/// `body`, and returns how many body bytes it managed to write before the
/// client hung up (or the safety stop).
fn serve_once(headers: &'static str, body: Body) -> (String, JoinHandle<usize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let handle = thread::spawn(move || {
        let (stream, _) = listener.accept().expect("accept");
        let mut reader = BufReader::new(stream);
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return 0;
            }
            if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = value.trim().parse().unwrap_or(0);
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut request = vec![0; length];
        if reader.read_exact(&mut request).is_err() {
            return 0;
        }
        let mut stream = reader.into_inner();
        if stream
            .write_all(format!("HTTP/1.1 200 OK\r\n{headers}\r\n").as_bytes())
            .is_err()
        {
            return 0;
        }
        let (head, piece, total) = match body {
            Body::Endless { head, piece } => (head, piece, SAFETY_STOP),
            Body::GiantLine { head, total } => (head, vec![b'x'; 64 * 1024], total),
        };
        let mut written = 0usize;
        if stream.write_all(&head).is_err() {
            return written;
        }
        written += head.len();
        while written < total.min(SAFETY_STOP) {
            if stream.write_all(&piece).is_err() {
                break;
            }
            written += piece.len();
        }
        written
    });
    (base, handle)
}

/// The process's peak resident memory so far.
fn peak_rss() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("a VmHWM line");
    let kib: usize = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .expect("VmHWM in kB");
    kib * 1024
}

fn options() -> HttpOptions {
    HttpOptions::default()
        .max_retries(0)
        .max_answer_bytes(ANSWER_CAP)
        .max_event_bytes(EVENT_CAP)
}

fn request() -> ModelRequest {
    ModelRequest {
        system: Vec::new(),
        tools: Vec::new(),
        messages: vec![Message::user("hi")],
        cache_breakpoints: Vec::new(),
    }
}

/// Streams `model`'s answer to the end and returns the error it ended with
/// and the bytes of text it yielded first.
async fn stream_error(model: &dyn Model) -> (ModelError, usize) {
    let request = request();
    let mut events = model.stream(&request).await.expect("stream");
    let mut text = 0usize;
    while let Some(event) = events.next().await {
        match event {
            Ok(ModelEvent::TextDelta(delta)) => text += delta.len(),
            Ok(ModelEvent::Completed(_)) => panic!("an endless answer completed"),
            Ok(_) => {}
            Err(error) => return (error, text),
        }
    }
    panic!("the stream ended without an error");
}

fn sse(name: &str, data: &str) -> Vec<u8> {
    format!("event: {name}\ndata: {data}\n\n").into_bytes()
}

const SSE_HEADERS: &str = "content-type: text/event-stream\r\nconnection: close\r\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_servers_are_cut_off_at_the_caps() {
    // Warm up: the client, the runtime and the parsers allocate once.
    let (base, server) = serve_once(
        "content-type: application/json\r\ncontent-length: 52\r\nconnection: close\r\n",
        Body::GiantLine {
            head: br#"{"content":[{"type":"text","text":"ok"}],"x":"xxxx"}"#.to_vec(),
            total: 0,
        },
    );
    let model = Anthropic::new(&base, "k", "m").with_http(options());
    let answer = model.complete(&request()).await.expect("warm-up answer");
    assert_eq!(answer.message.content, "ok");
    server.join().expect("server");
    let baseline = peak_rss();

    // 1. An Anthropic stream of text deltas that never ends.
    let head = [
        sse(
            "message_start",
            r#"{"type":"message_start","message":{"id":"m","model":"m","usage":{"input_tokens":1}}}"#,
        ),
        sse(
            "content_block_start",
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        ),
    ]
    .concat();
    let delta = serde_json::json!({"type": "content_block_delta", "index": 0,
        "delta": {"type": "text_delta", "text": "a".repeat(1000)}});
    let piece = sse("content_block_delta", &delta.to_string());
    let (base, server) = serve_once(SSE_HEADERS, Body::Endless { head, piece });
    let model = Anthropic::new(&base, "k", "m").with_http(options());
    let (error, text) = stream_error(&model).await;
    assert_eq!(error.kind(), ModelErrorKind::AnswerTooLarge, "{error}");
    assert!(error.message().contains("8 MiB"), "{error}");
    assert!(error.message().contains("cut off mid-stream"), "{error}");
    assert!(text > 0 && text <= ANSWER_CAP, "{text} bytes of text");
    let sent = server.join().expect("server");
    assert!(
        sent <= ANSWER_CAP + IN_FLIGHT,
        "the server pushed {sent} bytes"
    );

    // 2. One OpenAI event line of 300 MB (the issue's case).
    let (base, server) = serve_once(
        SSE_HEADERS,
        Body::GiantLine {
            head: b"data: {\"id\":\"".to_vec(),
            total: 300_000_000,
        },
    );
    let model = OpenAiChat::new(format!("{base}/v1"), "k", "m").with_http(options());
    let (error, text) = stream_error(&model).await;
    assert_eq!(error.kind(), ModelErrorKind::EventTooLarge, "{error}");
    assert!(error.message().contains("1 MiB"), "{error}");
    assert_eq!(text, 0);
    let sent = server.join().expect("server");
    assert!(
        sent <= EVENT_CAP + IN_FLIGHT,
        "the server pushed {sent} bytes"
    );

    // 3. A whole (not streamed) answer that never ends.
    let (base, server) = serve_once(
        "content-type: application/json\r\nconnection: close\r\n",
        Body::Endless {
            head: br#"{"content":[{"type":"text","text":""#.to_vec(),
            piece: vec![b'a'; 64 * 1024],
        },
    );
    let model = Anthropic::new(&base, "k", "m").with_http(options());
    let error = model.complete(&request()).await.expect_err("too large");
    assert_eq!(error.kind(), ModelErrorKind::AnswerTooLarge, "{error}");
    let sent = server.join().expect("server");
    assert!(
        sent <= ANSWER_CAP + IN_FLIGHT,
        "the server pushed {sent} bytes"
    );

    // 4. A whole answer that announces a gigabyte: refused before reading.
    let (base, server) = serve_once(
        "content-type: application/json\r\ncontent-length: 1073741824\r\nconnection: close\r\n",
        Body::Endless {
            head: Vec::new(),
            piece: vec![b' '; 64 * 1024],
        },
    );
    let model = OpenAiChat::new(format!("{base}/v1"), "k", "m").with_http(options());
    let error = model.complete(&request()).await.expect_err("too large");
    assert_eq!(error.kind(), ModelErrorKind::AnswerTooLarge, "{error}");
    let sent = server.join().expect("server");
    assert!(sent <= IN_FLIGHT, "the server pushed {sent} bytes");

    let grown = peak_rss().saturating_sub(baseline);
    eprintln!(
        "peak resident memory grew by {:.1} MiB over the four hostile answers",
        grown as f64 / MIB as f64
    );
    assert!(
        grown <= MEMORY_BUDGET,
        "the peak resident memory grew by {} MiB (budget {} MiB) while the servers offered \
         gigabytes",
        grown / MIB,
        MEMORY_BUDGET / MIB
    );
}
