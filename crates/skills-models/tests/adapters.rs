//! The HTTP adapters against a real HTTP/1.1 server on 127.0.0.1, started
//! by each test on a tokio `TcpListener`. The server records every request
//! (path, headers, body bytes) and replays scripted answers in the
//! providers' documented shapes: whole JSON bodies, or server-sent events
//! written as chunked transfer encoding in small pieces (so events split
//! across reads), optionally cut off before the final chunk to drop the
//! connection mid-stream.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};
use skills_agent::{
    Message, Model, ModelError, ModelErrorKind, ModelEvent, ModelRequest, ModelResponse,
    StopReason, SystemBlock, ToolCall, ToolSpec, Usage,
};
use skills_models::{Anthropic, HttpOptions, OpenAiChat, OpenAiResponses};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

// ---------------------------------------------------------------------------
// The local server.

/// One scripted answer.
#[derive(Debug, Clone)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    /// Bytes per written chunk (0: the body in one chunk).
    piece: usize,
    /// Close the connection before the last chunk.
    drop: bool,
    /// Wait this long before answering.
    delay: Duration,
}

impl Reply {
    fn json(status: u16, body: Value) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string().into_bytes(),
            piece: 0,
            drop: false,
            delay: Duration::ZERO,
        }
    }

    /// Server-sent events: `(event name, data)` pairs; `None` names write
    /// only a `data:` line (OpenAI Chat).
    fn sse(events: &[(Option<&str>, String)]) -> Self {
        let mut body = String::from(": a comment the parser skips\n\n");
        for (name, data) in events {
            if let Some(name) = name {
                body.push_str(&format!("event: {name}\n"));
            }
            body.push_str(&format!("data: {data}\n\n"));
        }
        Self::raw_sse(body)
    }

    fn raw_sse(body: impl Into<String>) -> Self {
        Self {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            body: body.into().into_bytes(),
            piece: 7,
            drop: false,
            delay: Duration::ZERO,
        }
    }

    fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    fn dropped(mut self) -> Self {
        self.drop = true;
        self
    }

    fn delayed(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

/// One request the server received.
#[derive(Debug, Clone)]
struct Received {
    path: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

struct Server {
    base: String,
    received: Arc<Mutex<Vec<Received>>>,
}

/// A check the server runs on each request before its script: a reply
/// here answers the request instead (and keeps the script's next reply).
type Gate = fn(&Received) -> Option<Reply>;

impl Server {
    async fn start(replies: Vec<Reply>) -> Self {
        Self::start_gated(replies, |_| None).await
    }

    async fn start_gated(replies: Vec<Reply>, gate: Gate) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let received = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(VecDeque::from(replies)));
        let log = Arc::clone(&received);
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let log = Arc::clone(&log);
                let script = Arc::clone(&script);
                tokio::spawn(async move {
                    let _ = serve(socket, log, script, gate).await;
                });
            }
        });
        Self { base, received }
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().expect("log").clone()
    }
}

async fn serve(
    mut socket: TcpStream,
    log: Arc<Mutex<Vec<Received>>>,
    script: Arc<Mutex<VecDeque<Reply>>>,
    gate: Gate,
) -> std::io::Result<()> {
    // The request head, then `content-length` bytes of body.
    let mut buffer = Vec::new();
    let head_end = loop {
        let mut chunk = [0u8; 4096];
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        buffer.extend_from_slice(&chunk[..n]);
        if let Some(i) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default().to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end..].to_vec();
    while body.len() < length {
        let mut chunk = [0u8; 4096];
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let received = Received {
        path: request_line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_owned(),
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    };
    let refused = gate(&received);
    log.lock().expect("log").push(received);
    let next = match refused {
        Some(reply) => Some(reply),
        None => script.lock().expect("script").pop_front(),
    };
    let reply = next.unwrap_or_else(|| {
        Reply::json(
            500,
            json!({"error": {"message": "the test server's script ran out"}}),
        )
    });
    tokio::time::sleep(reply.delay).await;
    let mut head = format!("HTTP/1.1 {} Scripted\r\n", reply.status);
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("transfer-encoding: chunked\r\nconnection: close\r\n\r\n");
    socket.write_all(head.as_bytes()).await?;
    let piece = if reply.piece == 0 {
        reply.body.len().max(1)
    } else {
        reply.piece
    };
    for chunk in reply.body.chunks(piece) {
        socket
            .write_all(format!("{:x}\r\n", chunk.len()).as_bytes())
            .await?;
        socket.write_all(chunk).await?;
        socket.write_all(b"\r\n").await?;
        socket.flush().await?;
        if reply.piece != 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    if !reply.drop {
        socket.write_all(b"0\r\n\r\n").await?;
    }
    socket.flush().await?;
    socket.shutdown().await
}

// ---------------------------------------------------------------------------
// Requests and helpers.

fn fast() -> HttpOptions {
    HttpOptions::default()
        .backoff(Duration::from_millis(1))
        .max_wait(Duration::from_secs(5))
        .idle_timeout(Duration::from_secs(5))
}

/// A conversation the way the engine builds them: a stable system block,
/// the skill tools, a user turn and (in later requests) a tool round.
fn conversation(rounds: usize) -> ModelRequest {
    let mut messages = vec![Message::user("Summarize report.pdf")];
    let rounds_script = [
        (
            Message::assistant_with_calls(
                "",
                vec![ToolCall::new(
                    "call_1",
                    "load_skill",
                    Value::String(r#"{"name":"pdf"}"#.into()),
                )],
            ),
            Message::tool_result(
                "call_1",
                "load_skill",
                "<skill_content name=\"pdf\">Use pdftotext.</skill_content>",
            ),
        ),
        (
            Message::assistant_with_calls(
                "Reading the reference.",
                vec![ToolCall::new(
                    "call_2",
                    "read_skill_file",
                    json!({"name": "pdf", "path": "REFERENCE.md"}),
                )],
            ),
            Message::tool_result("call_2", "read_skill_file", "# Reference\nflags: -layout"),
        ),
    ];
    for (assistant, result) in rounds_script.into_iter().take(rounds) {
        messages.push(assistant);
        messages.push(result);
    }
    ModelRequest {
        system: vec![SystemBlock {
            text: "You are helpful.\n<available_skills>\n<skill name=\"pdf\">Reads PDFs.</skill>\n</available_skills>".into(),
            stable: true,
        }],
        tools: vec![
            ToolSpec::new(
                "load_skill",
                "Loads a skill's instructions.",
                json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
            ),
            ToolSpec::new(
                "read_skill_file",
                "Reads a file of a loaded skill.",
                json!({"type": "object", "properties": {"name": {"type": "string"}, "path": {"type": "string"}}, "required": ["name", "path"]}),
            ),
        ],
        messages,
        cache_breakpoints: Vec::new(),
    }
}

async fn collect(model: &dyn Model, request: &ModelRequest) -> Vec<Result<ModelEvent, ModelError>> {
    let stream = model.stream(request).await.expect("stream starts");
    stream.collect().await
}

fn completed(events: &[Result<ModelEvent, ModelError>]) -> ModelResponse {
    match events.last() {
        Some(Ok(ModelEvent::Completed(response))) => response.clone(),
        other => panic!("the stream did not complete: {other:?}"),
    }
}

fn text_of(events: &[Result<ModelEvent, ModelError>]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            Ok(ModelEvent::TextDelta(t)) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn calls_of(events: &[Result<ModelEvent, ModelError>]) -> Vec<ToolCall> {
    events
        .iter()
        .filter_map(|e| match e {
            Ok(ModelEvent::ToolCall(c)) => Some(c.clone()),
            _ => None,
        })
        .collect()
}

/// Splits `text` into pieces of at most `n` characters.
fn pieces(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(n).map(|c| c.iter().collect()).collect()
}

// ---------------------------------------------------------------------------
// OpenAI Chat Completions.

fn chat_chunk(delta: Value, finish: Option<&str>) -> String {
    json!({
        "id": "chatcmpl-9", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        "usage": null
    })
    .to_string()
}

#[tokio::test]
async fn openai_chat_streams_text_and_parallel_tool_calls_split_across_deltas() {
    let args_a = r#"{"name":"pdf"}"#;
    let args_b = r#"{"name":"pdf","path":"REFERENCE.md"}"#;
    let mut events = vec![
        (
            None,
            chat_chunk(json!({"role": "assistant", "content": ""}), None),
        ),
        (None, chat_chunk(json!({"content": "Let me "}), None)),
        (None, chat_chunk(json!({"content": "look."}), None)),
        (
            None,
            chat_chunk(
                json!({"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "load_skill", "arguments": ""}}]}),
                None,
            ),
        ),
        (
            None,
            chat_chunk(
                json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "read_skill_file", "arguments": ""}}]}),
                None,
            ),
        ),
    ];
    // The two calls' arguments arrive interleaved, a few bytes at a time.
    let (a, b) = (pieces(args_a, 3), pieces(args_b, 4));
    for i in 0..a.len().max(b.len()) {
        if let Some(p) = a.get(i) {
            events.push((
                None,
                chat_chunk(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}),
                    None,
                ),
            ));
        }
        if let Some(p) = b.get(i) {
            events.push((
                None,
                chat_chunk(
                    json!({"tool_calls": [{"index": 1, "function": {"arguments": p}}]}),
                    None,
                ),
            ));
        }
    }
    events.push((None, chat_chunk(json!({}), Some("tool_calls"))));
    events.push((None, json!({"id": "chatcmpl-9", "object": "chat.completion.chunk", "model": "gpt-test", "choices": [], "usage": {"prompt_tokens": 1200, "completion_tokens": 31, "total_tokens": 1231, "prompt_tokens_details": {"cached_tokens": 1024}}}).to_string()));
    events.push((None, "[DONE]".into()));
    let server = Server::start(vec![Reply::sse(&events)]).await;
    let model =
        OpenAiChat::new(format!("{}/v1", server.base), "sk-test", "gpt-test").with_http(fast());
    let request = conversation(0);

    let got = collect(&model, &request).await;

    assert_eq!(text_of(&got), "Let me look.");
    let expected_calls = vec![
        ToolCall::new("call_a", "load_skill", Value::String(args_a.into())),
        ToolCall::new("call_b", "read_skill_file", Value::String(args_b.into())),
    ];
    assert_eq!(calls_of(&got), expected_calls);
    let response = completed(&got);
    assert_eq!(response.message.content, "Let me look.");
    assert_eq!(response.message.tool_calls, expected_calls);
    assert_eq!(response.stop, StopReason::ToolUse);
    assert_eq!(response.usage, Usage::new(1200, 31, 1024, 0));
    assert_eq!(response.model.as_deref(), Some("gpt-test"));
    assert!(response.retries.is_empty());

    let sent = server.received();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].path, "/v1/chat/completions");
    assert_eq!(sent[0].header("authorization"), Some("Bearer sk-test"));
    assert_eq!(sent[0].header("content-type"), Some("application/json"));
    assert_eq!(sent[0].header("accept"), Some("text/event-stream"));
    assert_eq!(sent[0].body, model.body(&request, true));
    assert_eq!(
        sent[0].body,
        concat!(
            r#"{"model":"gpt-test","stream":true,"stream_options":{"include_usage":true},"#,
            r#""tools":[{"type":"function","function":{"name":"load_skill","description":"Loads a skill's instructions.","parameters":{"properties":{"name":{"type":"string"}},"required":["name"],"type":"object"}}},"#,
            r#"{"type":"function","function":{"name":"read_skill_file","description":"Reads a file of a loaded skill.","parameters":{"properties":{"name":{"type":"string"},"path":{"type":"string"}},"required":["name","path"],"type":"object"}}}],"#,
            r#""messages":[{"role":"system","content":"You are helpful.\n<available_skills>\n<skill name=\"pdf\">Reads PDFs.</skill>\n</available_skills>"},"#,
            r#"{"role":"user","content":"Summarize report.pdf"}]}"#
        )
    );
}

#[tokio::test]
async fn openai_chat_complete_retries_a_429_with_retry_after_and_a_500() {
    let server = Server::start(vec![
        Reply::json(429, json!({"error": {"message": "Rate limit reached for gpt-test", "type": "requests", "code": "rate_limit_exceeded"}}))
            .header("retry-after", "1"),
        Reply::json(500, json!({"error": {"message": "The server had an error", "type": "server_error"}})),
        Reply::json(200, json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Done.", "refusal": null}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 2, "total_tokens": 52, "prompt_tokens_details": {"cached_tokens": 0}}
        })),
    ])
    .await;
    let model = OpenAiChat::new(format!("{}/v1", server.base), "sk-test", "gpt-test")
        .with_http(fast())
        .with_max_completion_tokens(256);
    let request = conversation(1);

    let response = model
        .complete(&request)
        .await
        .expect("succeeds after retries");

    assert_eq!(response.message.content, "Done.");
    assert_eq!(response.stop, StopReason::EndTurn);
    assert_eq!(response.usage, Usage::new(50, 2, 0, 0));
    assert_eq!(response.retries.len(), 2, "{:?}", response.retries);
    assert_eq!(response.retries[0].attempt, 1);
    assert_eq!(
        response.retries[0].wait,
        Duration::from_secs(1),
        "retry-after: 1"
    );
    assert_eq!(
        response.retries[0].reason,
        "HTTP 429: requests: Rate limit reached for gpt-test"
    );
    assert_eq!(response.retries[1].attempt, 2);
    assert!(response.retries[1].wait <= Duration::from_millis(2));
    assert_eq!(
        response.retries[1].reason,
        "HTTP 500: server_error: The server had an error"
    );
    let sent = server.received();
    assert_eq!(sent.len(), 3);
    for attempt in &sent {
        assert_eq!(
            attempt.body, sent[0].body,
            "every attempt sends the same bytes"
        );
    }
    assert!(
        sent[0]
            .body
            .starts_with(r#"{"model":"gpt-test","max_completion_tokens":256,"tools":["#),
        "{}",
        sent[0].body
    );
    assert_eq!(sent[0].body, model.body(&request, false));
}

#[tokio::test]
async fn openai_auth_errors_carry_the_providers_message_and_are_not_retried() {
    let server = Server::start(vec![Reply::json(
        401,
        json!({"error": {"message": "Incorrect API key provided: sk-bad.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}),
    )])
    .await;
    let model =
        OpenAiChat::new(format!("{}/v1", server.base), "sk-bad", "gpt-test").with_http(fast());

    let error = model.complete(&conversation(0)).await.expect_err("401");

    assert_eq!(error.kind(), ModelErrorKind::Auth);
    assert_eq!(error.status(), Some(401));
    assert_eq!(
        error.message(),
        "invalid_request_error: Incorrect API key provided: sk-bad."
    );
    assert_eq!(error.retries(), 0);
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn a_stream_cut_off_after_text_is_an_error_not_a_retry() {
    let events = vec![
        (
            None,
            chat_chunk(json!({"role": "assistant", "content": "Half an "}), None),
        ),
        (None, chat_chunk(json!({"content": "answer"}), None)),
    ];
    let server = Server::start(vec![Reply::sse(&events).dropped(), Reply::sse(&events)]).await;
    let model =
        OpenAiChat::new(format!("{}/v1", server.base), "sk-test", "gpt-test").with_http(fast());

    let got = collect(&model, &conversation(0)).await;

    assert_eq!(text_of(&got), "Half an answer");
    let Some(Err(error)) = got.last() else {
        panic!("the stream must end with an error: {got:?}");
    };
    assert_eq!(error.kind(), ModelErrorKind::Connection, "{error}");
    assert!(error.message().contains("cut off mid-stream"), "{error}");
    assert!(!got.iter().any(|e| matches!(e, Ok(ModelEvent::Retry(_)))));
    assert_eq!(server.received().len(), 1, "no retry once text was yielded");
}

#[tokio::test]
async fn a_stream_dropped_before_its_first_event_is_retried() {
    let server = Server::start(vec![
        Reply::raw_sse("data: {\"choices\":[],\"id\":\"x\"}\n\n").dropped(),
        Reply::sse(&[
            (None, chat_chunk(json!({"content": "Hello"}), Some("stop"))),
            (None, "[DONE]".into()),
        ]),
    ])
    .await;
    let model =
        OpenAiChat::new(format!("{}/v1", server.base), "sk-test", "gpt-test").with_http(fast());

    let got = collect(&model, &conversation(0)).await;

    let Some(Ok(ModelEvent::Retry(retry))) = got.first() else {
        panic!("a retry first: {got:?}");
    };
    assert_eq!(retry.attempt, 1);
    assert!(
        retry.reason.contains("dropped mid-stream"),
        "{}",
        retry.reason
    );
    assert_eq!(text_of(&got), "Hello");
    let response = completed(&got);
    assert_eq!(response.retries.len(), 1);
    assert_eq!(response.stop, StopReason::EndTurn);
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn malformed_sse_is_an_invalid_response() {
    let server = Server::start(vec![Reply::raw_sse(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\ndata: {not json\n\n",
    )])
    .await;
    let model =
        OpenAiChat::new(format!("{}/v1", server.base), "sk-test", "gpt-test").with_http(fast());

    let got = collect(&model, &conversation(0)).await;

    assert_eq!(text_of(&got), "ok");
    let Some(Err(error)) = got.last() else {
        panic!("the stream must end with an error: {got:?}");
    };
    assert_eq!(error.kind(), ModelErrorKind::InvalidResponse, "{error}");
    assert!(
        error.message().contains("malformed chat completion chunk"),
        "{error}"
    );
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn a_silent_server_times_out() {
    let server = Server::start(vec![
        Reply::json(200, json!({})).delayed(Duration::from_secs(3)),
    ])
    .await;
    let model = OpenAiChat::new(format!("{}/v1", server.base), "sk-test", "gpt-test").with_http(
        fast()
            .max_retries(0)
            .idle_timeout(Duration::from_millis(200)),
    );

    let error = model
        .complete(&conversation(0))
        .await
        .expect_err("times out");

    assert_eq!(error.kind(), ModelErrorKind::Timeout, "{error}");
}

#[tokio::test]
async fn a_refused_connection_is_retried_then_reported() {
    // A port nothing listens on: bind, read the port, close.
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("addr");
    drop(listener);
    let model = OpenAiChat::new(format!("http://{address}/v1"), "sk-test", "gpt-test")
        .with_http(fast().max_retries(2));

    let error = model.complete(&conversation(0)).await.expect_err("refused");

    assert_eq!(error.kind(), ModelErrorKind::Connection, "{error}");
    assert_eq!(error.retries(), 2);
    assert_eq!(error.status(), None);
}

// ---------------------------------------------------------------------------
// OpenAI Responses.

fn responses_event(kind: &str, fields: Value) -> (Option<&'static str>, String) {
    let mut event = json!({"type": kind});
    if let (Some(map), Value::Object(extra)) = (event.as_object_mut(), fields) {
        map.extend(extra);
    }
    // The event name repeats the type, as the API writes it.
    let name: &'static str = Box::leak(kind.to_owned().into_boxed_str());
    (Some(name), event.to_string())
}

#[tokio::test]
async fn openai_responses_streams_text_and_interleaved_function_calls() {
    let args_a = r#"{"name":"pdf"}"#;
    let args_b = r#"{"name":"pdf","path":"REFERENCE.md"}"#;
    let mut events = vec![
        responses_event(
            "response.created",
            json!({"sequence_number": 0, "response": {"id": "resp_1", "object": "response", "status": "in_progress", "model": "gpt-test", "output": []}}),
        ),
        responses_event(
            "response.output_item.added",
            json!({"output_index": 0, "item": {"type": "message", "id": "msg_1", "role": "assistant", "content": [], "status": "in_progress"}}),
        ),
        responses_event(
            "response.output_text.delta",
            json!({"item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "Checking "}),
        ),
        responses_event(
            "response.output_text.delta",
            json!({"item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "both."}),
        ),
        responses_event(
            "response.output_text.done",
            json!({"item_id": "msg_1", "output_index": 0, "content_index": 0, "text": "Checking both."}),
        ),
        responses_event(
            "response.output_item.added",
            json!({"output_index": 1, "item": {"type": "function_call", "id": "fc_a", "call_id": "call_a", "name": "load_skill", "arguments": "", "status": "in_progress"}}),
        ),
        responses_event(
            "response.output_item.added",
            json!({"output_index": 2, "item": {"type": "function_call", "id": "fc_b", "call_id": "call_b", "name": "read_skill_file", "arguments": "", "status": "in_progress"}}),
        ),
    ];
    let (a, b) = (pieces(args_a, 2), pieces(args_b, 5));
    for i in 0..a.len().max(b.len()) {
        if let Some(p) = a.get(i) {
            events.push(responses_event(
                "response.function_call_arguments.delta",
                json!({"item_id": "fc_a", "output_index": 1, "delta": p}),
            ));
        }
        if let Some(p) = b.get(i) {
            events.push(responses_event(
                "response.function_call_arguments.delta",
                json!({"item_id": "fc_b", "output_index": 2, "delta": p}),
            ));
        }
    }
    events.push(responses_event(
        "response.function_call_arguments.done",
        json!({"item_id": "fc_a", "output_index": 1, "arguments": args_a}),
    ));
    events.push(responses_event("response.output_item.done", json!({"output_index": 1, "item": {"type": "function_call", "id": "fc_a", "call_id": "call_a", "name": "load_skill", "arguments": args_a, "status": "completed"}})));
    events.push(responses_event("response.output_item.done", json!({"output_index": 2, "item": {"type": "function_call", "id": "fc_b", "call_id": "call_b", "name": "read_skill_file", "arguments": args_b, "status": "completed"}})));
    events.push(responses_event("response.completed", json!({"response": {
        "id": "resp_1", "object": "response", "status": "completed", "model": "gpt-test",
        "output": [
            {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "Checking both.", "annotations": []}]},
            {"type": "function_call", "id": "fc_a", "call_id": "call_a", "name": "load_skill", "arguments": args_a, "status": "completed"},
            {"type": "function_call", "id": "fc_b", "call_id": "call_b", "name": "read_skill_file", "arguments": args_b, "status": "completed"}
        ],
        "usage": {"input_tokens": 3000, "input_tokens_details": {"cached_tokens": 2048}, "output_tokens": 40, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 3040}
    }})));
    let server = Server::start(vec![Reply::sse(&events)]).await;
    let model = OpenAiResponses::new(format!("{}/v1/", server.base), "sk-test", "gpt-test")
        .with_http(fast())
        .with_max_output_tokens(1000);
    let request = conversation(2);

    let got = collect(&model, &request).await;

    assert_eq!(text_of(&got), "Checking both.");
    let expected_calls = vec![
        ToolCall::new("call_a", "load_skill", Value::String(args_a.into())),
        ToolCall::new("call_b", "read_skill_file", Value::String(args_b.into())),
    ];
    assert_eq!(calls_of(&got), expected_calls);
    let response = completed(&got);
    assert_eq!(response.message.tool_calls, expected_calls);
    assert_eq!(response.message.content, "Checking both.");
    assert_eq!(response.stop, StopReason::ToolUse);
    assert_eq!(response.usage, Usage::new(3000, 40, 2048, 0));
    assert_eq!(response.id.as_deref(), Some("resp_1"));

    let sent = server.received();
    assert_eq!(sent[0].path, "/v1/responses");
    assert_eq!(sent[0].header("authorization"), Some("Bearer sk-test"));
    assert_eq!(sent[0].body, model.body(&request, true));
    let body: Value = serde_json::from_str(&sent[0].body).expect("json");
    assert_eq!(
        body["input"],
        json!([
            {"type": "message", "role": "system", "content": request.system[0].text},
            {"type": "message", "role": "user", "content": "Summarize report.pdf"},
            {"type": "function_call", "call_id": "call_1", "name": "load_skill", "arguments": "{\"name\":\"pdf\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "<skill_content name=\"pdf\">Use pdftotext.</skill_content>"},
            {"type": "message", "role": "assistant", "content": "Reading the reference."},
            {"type": "function_call", "call_id": "call_2", "name": "read_skill_file", "arguments": "{\"name\":\"pdf\",\"path\":\"REFERENCE.md\"}"},
            {"type": "function_call_output", "call_id": "call_2", "output": "# Reference\nflags: -layout"}
        ])
    );
    assert_eq!(
        body["tools"][0],
        json!({"type": "function", "name": "load_skill", "description": "Loads a skill's instructions.", "parameters": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}, "strict": false})
    );
    assert!(sent[0].body.starts_with(
        r#"{"model":"gpt-test","max_output_tokens":1000,"store":false,"stream":true,"tools":["#
    ));
}

#[tokio::test]
async fn openai_responses_complete_and_a_failed_stream() {
    let server = Server::start(vec![
        Reply::json(200, json!({
            "id": "resp_2", "object": "response", "status": "completed", "model": "gpt-test",
            "output": [{"type": "message", "id": "msg_2", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "All done.", "annotations": []}]}],
            "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 64}, "output_tokens": 3, "total_tokens": 103}
        })),
        Reply::sse(&[
            responses_event("response.created", json!({"response": {"id": "resp_3", "status": "in_progress", "output": []}})),
            responses_event("error", json!({"code": "invalid_prompt", "message": "The prompt was rejected.", "param": null})),
        ]),
    ])
    .await;
    let model = OpenAiResponses::new(format!("{}/v1", server.base), "sk-test", "gpt-test")
        .with_http(fast());
    let request = conversation(0);

    let response = model.complete(&request).await.expect("complete");
    assert_eq!(response.message.content, "All done.");
    assert_eq!(response.usage, Usage::new(100, 3, 64, 0));
    assert_eq!(response.stop, StopReason::EndTurn);

    let got = collect(&model, &request).await;
    let Some(Err(error)) = got.last() else {
        panic!("an error: {got:?}");
    };
    assert_eq!(error.kind(), ModelErrorKind::Request);
    assert_eq!(error.message(), "invalid_prompt: The prompt was rejected.");
    assert_eq!(server.received().len(), 2, "a request error is not retried");
    assert_eq!(server.received()[0].body, model.body(&request, false));
}

// ---------------------------------------------------------------------------
// Anthropic Messages.

fn anthropic_event(fields: Value) -> (Option<&'static str>, String) {
    let name = fields["type"].as_str().unwrap_or("unknown").to_owned();
    (Some(Box::leak(name.into_boxed_str())), fields.to_string())
}

#[tokio::test]
async fn anthropic_streams_text_and_tool_use_from_input_json_deltas() {
    let input_a = r#"{"name": "pdf"}"#;
    let input_b = r#"{"name": "pdf", "path": "REFERENCE.md"}"#;
    let mut events = vec![
        anthropic_event(
            json!({"type": "message_start", "message": {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test", "content": [], "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 25, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 4000, "output_tokens": 1}}}),
        ),
        anthropic_event(
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        anthropic_event(json!({"type": "ping"})),
        anthropic_event(
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "I'll load "}}),
        ),
        anthropic_event(
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "the skill."}}),
        ),
        anthropic_event(json!({"type": "content_block_stop", "index": 0})),
        anthropic_event(
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_a", "name": "load_skill", "input": {}}}),
        ),
        anthropic_event(
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}}),
        ),
    ];
    for p in pieces(input_a, 4) {
        events.push(anthropic_event(json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": p}})));
    }
    events.push(anthropic_event(
        json!({"type": "content_block_stop", "index": 1}),
    ));
    events.push(anthropic_event(json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_b", "name": "read_skill_file", "input": {}}})));
    for p in pieces(input_b, 6) {
        events.push(anthropic_event(json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": p}})));
    }
    events.push(anthropic_event(
        json!({"type": "content_block_stop", "index": 2}),
    ));
    events.push(anthropic_event(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 89}})));
    events.push(anthropic_event(json!({"type": "message_stop"})));
    let server = Server::start(vec![Reply::sse(&events)]).await;
    let model = Anthropic::new(&server.base, "sk-ant-test", "claude-test")
        .with_http(fast())
        .with_max_tokens(8192);
    let request = conversation(1);

    let got = collect(&model, &request).await;

    assert_eq!(text_of(&got), "I'll load the skill.");
    let expected_calls = vec![
        ToolCall::new("toolu_a", "load_skill", json!({"name": "pdf"})),
        ToolCall::new(
            "toolu_b",
            "read_skill_file",
            json!({"name": "pdf", "path": "REFERENCE.md"}),
        ),
    ];
    assert_eq!(calls_of(&got), expected_calls);
    let response = completed(&got);
    assert_eq!(response.message.tool_calls, expected_calls);
    assert_eq!(response.stop, StopReason::ToolUse);
    assert_eq!(response.usage, Usage::new(4325, 89, 4000, 300));
    assert_eq!(response.id.as_deref(), Some("msg_01"));

    let sent = server.received();
    assert_eq!(sent[0].path, "/v1/messages");
    assert_eq!(sent[0].header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(sent[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent[0].header("authorization"), None);
    assert_eq!(sent[0].body, model.body(&request, true));
    assert_eq!(
        sent[0].body,
        concat!(
            r#"{"model":"claude-test","max_tokens":8192,"stream":true,"#,
            r#""tools":[{"name":"load_skill","description":"Loads a skill's instructions.","input_schema":{"properties":{"name":{"type":"string"}},"required":["name"],"type":"object"}},"#,
            r#"{"name":"read_skill_file","description":"Reads a file of a loaded skill.","input_schema":{"properties":{"name":{"type":"string"},"path":{"type":"string"}},"required":["name","path"],"type":"object"}}],"#,
            r#""system":[{"type":"text","text":"You are helpful.\n<available_skills>\n<skill name=\"pdf\">Reads PDFs.</skill>\n</available_skills>"}],"#,
            r#""messages":[{"role":"user","content":[{"type":"text","text":"Summarize report.pdf"}]},"#,
            r#"{"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"load_skill","input":{"name":"pdf"}}]},"#,
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"<skill_content name=\"pdf\">Use pdftotext.</skill_content>"}]}]}"#
        )
    );
}

#[tokio::test]
async fn anthropic_overloaded_529_and_an_overloaded_stream_event_are_retried() {
    let overloaded =
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}});
    let server = Server::start(vec![
        Reply::json(529, overloaded.clone()).header("retry-after-ms", "30"),
        Reply::json(200, json!({
            "id": "msg_02", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": "Hi."}], "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 90, "output_tokens": 2}
        })),
        Reply::sse(&[
            anthropic_event(json!({"type": "message_start", "message": {"id": "msg_03", "model": "claude-test", "content": [], "usage": {"input_tokens": 10, "output_tokens": 1}}})),
            anthropic_event(overloaded),
        ]),
        Reply::sse(&[
            anthropic_event(json!({"type": "message_start", "message": {"id": "msg_04", "model": "claude-test", "content": [], "usage": {"input_tokens": 10, "output_tokens": 1}}})),
            anthropic_event(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
            anthropic_event(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello again."}})),
            anthropic_event(json!({"type": "content_block_stop", "index": 0})),
            anthropic_event(json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 3}})),
            anthropic_event(json!({"type": "message_stop"})),
        ]),
    ])
    .await;
    let model = Anthropic::new(&server.base, "sk-ant-test", "claude-test").with_http(fast());
    let request = conversation(0);

    let response = model.complete(&request).await.expect("complete");
    assert_eq!(response.message.content, "Hi.");
    assert_eq!(response.usage, Usage::new(100, 2, 90, 0));
    assert_eq!(response.retries.len(), 1);
    assert_eq!(
        response.retries[0].wait,
        Duration::from_millis(30),
        "retry-after-ms"
    );
    assert_eq!(
        response.retries[0].reason,
        "HTTP 529: overloaded_error: Overloaded"
    );

    let got = collect(&model, &request).await;
    let Some(Ok(ModelEvent::Retry(retry))) = got.first() else {
        panic!("a retry first: {got:?}");
    };
    assert_eq!(retry.reason, "HTTP 529: overloaded_error: Overloaded");
    assert_eq!(text_of(&got), "Hello again.");
    let response = completed(&got);
    assert_eq!(response.stop, StopReason::MaxTokens);
    assert_eq!(response.retries.len(), 1);

    let sent = server.received();
    assert_eq!(sent.len(), 4);
    assert_eq!(sent[0].body, model.body(&request, false));
    assert_eq!(sent[2].body, model.body(&request, true));
}

#[tokio::test]
async fn anthropic_auth_error_and_a_retry_after_beyond_max_wait() {
    let server = Server::start(vec![
        Reply::json(401, json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}, "request_id": "req_1"})),
        Reply::json(429, json!({"type": "error", "error": {"type": "rate_limit_error", "message": "Number of request tokens has exceeded your per-minute rate limit"}}))
            .header("retry-after", "3600"),
    ])
    .await;
    let model = Anthropic::new(&server.base, "sk-ant-bad", "claude-test").with_http(fast());

    let auth = model.complete(&conversation(0)).await.expect_err("401");
    assert_eq!(auth.kind(), ModelErrorKind::Auth);
    assert_eq!(auth.status(), Some(401));
    assert_eq!(auth.message(), "authentication_error: invalid x-api-key");

    let limited = model.complete(&conversation(0)).await.expect_err("429");
    assert_eq!(limited.kind(), ModelErrorKind::RateLimited);
    assert_eq!(limited.status(), Some(429));
    assert!(
        limited
            .message()
            .starts_with("rate_limit_error: Number of request tokens"),
        "{limited}"
    );
    assert_eq!(
        limited.retries(),
        0,
        "an hour's retry-after is beyond max_wait"
    );
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn anthropic_malformed_tool_input_is_an_invalid_response() {
    let server = Server::start(vec![Reply::sse(&[
        anthropic_event(json!({"type": "message_start", "message": {"id": "m", "content": [], "usage": {"input_tokens": 1}}})),
        anthropic_event(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "load_skill", "input": {}}})),
        anthropic_event(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"name\": "}})),
        anthropic_event(json!({"type": "content_block_stop", "index": 0})),
    ])])
    .await;
    let model = Anthropic::new(&server.base, "k", "claude-test").with_http(fast());

    let got = collect(&model, &conversation(0)).await;

    assert_eq!(got.len(), 1, "{got:?}");
    let Err(error) = &got[0] else {
        panic!("an error: {got:?}");
    };
    assert_eq!(error.kind(), ModelErrorKind::InvalidResponse);
    assert!(
        error
            .message()
            .contains("tool call `load_skill` is not JSON"),
        "{error}"
    );
}

// ---------------------------------------------------------------------------
// Prefix stability on the wire.

/// Each request body the adapters send extends the previous one: the
/// previous body minus its closing `]}` is a byte prefix of the next.
#[tokio::test]
async fn each_request_body_extends_the_previous_one() {
    let chat_answer = Reply::json(
        200,
        json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}),
    );
    let responses_answer = Reply::json(200, json!({"status": "completed", "output": []}));
    let anthropic_answer = Reply::json(200, json!({"content": [], "stop_reason": "end_turn"}));
    let server = Server::start(
        std::iter::repeat_n(chat_answer, 3)
            .chain(std::iter::repeat_n(responses_answer, 3))
            .chain(std::iter::repeat_n(anthropic_answer, 3))
            .collect(),
    )
    .await;
    let models: Vec<Box<dyn Model>> = vec![
        Box::new(OpenAiChat::new(format!("{}/v1", server.base), "k", "m").with_http(fast())),
        Box::new(OpenAiResponses::new(format!("{}/v1", server.base), "k", "m").with_http(fast())),
        Box::new(Anthropic::new(&server.base, "k", "m").with_http(fast())),
    ];
    for model in &models {
        for rounds in 0..3 {
            model.complete(&conversation(rounds)).await.expect("answer");
        }
    }
    let sent = server.received();
    assert_eq!(sent.len(), 9);
    for (model, bodies) in models.iter().zip(sent.chunks(3)) {
        for pair in bodies.windows(2) {
            let head = pair[0]
                .body
                .strip_suffix("]}")
                .expect("the growing array closes the body");
            assert!(
                pair[1].body.starts_with(head) && pair[1].body.len() > pair[0].body.len(),
                "{}: the body does not extend the previous one:\n{}\n{}",
                model.name(),
                pair[0].body,
                pair[1].body
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Chunking.

/// However the bytes of a stream are cut (one byte at a time, CRLF line
/// ends), the decoders yield the same events.
#[test]
fn decoders_yield_the_same_events_whatever_the_chunking() {
    use skills_models::fuzzing::{Wire, decode_stream};

    let mut body = String::new();
    for (name, data) in [
        anthropic_event(
            json!({"type": "message_start", "message": {"id": "m", "content": [], "usage": {"input_tokens": 3, "cache_read_input_tokens": 5}}}),
        ),
        anthropic_event(
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        anthropic_event(
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "héllo ✓"}}),
        ),
        anthropic_event(json!({"type": "content_block_stop", "index": 0})),
        anthropic_event(
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "t", "name": "load_skill", "input": {}}}),
        ),
        anthropic_event(
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"name\":\"pdf\"}"}}),
        ),
        anthropic_event(json!({"type": "content_block_stop", "index": 1})),
        anthropic_event(
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 7}}),
        ),
        anthropic_event(json!({"type": "message_stop"})),
    ] {
        body.push_str(&format!(
            "event: {}\ndata: {data}\n\n",
            name.unwrap_or_default()
        ));
    }
    let whole = decode_stream(Wire::Anthropic, vec![body.clone().into_bytes()]);
    let response = completed(&whole);
    assert_eq!(response.message.content, "héllo ✓");
    assert_eq!(response.usage, Usage::new(8, 7, 5, 0));
    let bytewise = decode_stream(Wire::Anthropic, body.bytes().map(|b| vec![b]).collect());
    assert_eq!(bytewise, whole);
    let crlf = body.replace('\n', "\r\n");
    let crlf = decode_stream(
        Wire::Anthropic,
        crlf.as_bytes().chunks(5).map(<[u8]>::to_vec).collect(),
    );
    assert_eq!(crlf, whole);
}

// ---------------------------------------------------------------------------
// Odds and ends.

#[tokio::test]
async fn anthropic_sends_the_engines_cache_breakpoints() {
    let server = Server::start(vec![Reply::json(
        200,
        json!({"content": [], "stop_reason": "end_turn"}),
    )])
    .await;
    let model = Anthropic::new(&server.base, "k", "m").with_http(fast());
    let mut request = conversation(1);
    request.cache_breakpoints = vec![
        skills_agent::CacheBreakpoint::Tools,
        skills_agent::CacheBreakpoint::System { block: 0 },
        skills_agent::CacheBreakpoint::Message { index: 2 },
    ];

    model.complete(&request).await.expect("answer");

    let body: Value = serde_json::from_str(&server.received()[0].body).expect("json");
    let ephemeral = json!({"type": "ephemeral"});
    assert_eq!(body["tools"][1]["cache_control"], ephemeral);
    assert_eq!(body["tools"][0].get("cache_control"), None);
    assert_eq!(body["system"][0]["cache_control"], ephemeral);
    assert_eq!(
        body["messages"][2]["content"][0]["cache_control"],
        ephemeral
    );
    assert_eq!(
        server.received()[0].body.matches("cache_control").count(),
        3
    );
}

/// What an Anthropic-compatible server that insists on prompt caching
/// answers a request without `cache_control` markers: HTTP 400.
fn markers_required(request: &Received) -> Option<Reply> {
    (request.path == "/v1/messages" && !request.body.contains("\"cache_control\"")).then(|| {
        Reply::json(
            400,
            json!({"type": "error", "error": {"type": "invalid_request_error",
                "message": "this test server requires cache_control markers"}}),
        )
    })
}

/// An agent over one skill, built without any cache strategy.
fn agent_with_one_skill(cache: Option<skills_agent::CacheStrategy>) -> skills_agent::Agent {
    let skill = skills_core::define_skill("pdf", "Reads PDFs. Use when a PDF is shared.")
        .body("Use pdftotext.")
        .build()
        .expect("skill");
    let provider =
        std::sync::Arc::new(skills_core::InCodeProvider::new([skill]).expect("provider"));
    let builder = skills_agent::Agent::builder("assistant", provider).instructions("Be brief.");
    match cache {
        Some(strategy) => builder.cache(strategy),
        None => builder,
    }
    .build()
    .expect("agent")
}

/// Two streamed Anthropic answers: a `load_skill` call, then text.
fn anthropic_tool_round() -> Vec<Reply> {
    let start = |id: &str| {
        anthropic_event(
            json!({"type": "message_start", "message": {"id": id, "model": "claude-test",
            "usage": {"input_tokens": 20, "cache_creation_input_tokens": 500, "cache_read_input_tokens": 0, "output_tokens": 1}}}),
        )
    };
    vec![
        Reply::sse(&[
            start("msg_1"),
            anthropic_event(json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "load_skill", "input": {}}})),
            anthropic_event(json!({"type": "content_block_delta", "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": "{\"name\": \"pdf\"}"}})),
            anthropic_event(json!({"type": "content_block_stop", "index": 0})),
            anthropic_event(
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 9}}),
            ),
            anthropic_event(json!({"type": "message_stop"})),
        ]),
        Reply::sse(&[
            start("msg_2"),
            anthropic_event(
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ),
            anthropic_event(
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Done."}}),
            ),
            anthropic_event(json!({"type": "content_block_stop", "index": 0})),
            anthropic_event(
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
            ),
            anthropic_event(json!({"type": "message_stop"})),
        ]),
    ]
}

/// The cache strategy follows the model: an agent built without one sends
/// Anthropic its four breakpoints, through the `Runner` and through
/// `Session::build_request_for`, to a server that refuses requests without
/// markers; an explicit `AgentBuilder::cache` still wins.
#[tokio::test]
async fn anthropic_requests_carry_cache_markers_without_being_told() {
    let server = Server::start_gated(anthropic_tool_round(), markers_required).await;
    let model =
        std::sync::Arc::new(Anthropic::new(&server.base, "k", "claude-test").with_http(fast()));
    let agent = agent_with_one_skill(None);
    assert_eq!(
        model.cache_strategy(),
        skills_agent::CacheStrategy::Anthropic
    );
    assert_eq!(
        agent.cache_strategy_for(model.as_ref()),
        skills_agent::CacheStrategy::Anthropic
    );
    let mut session = agent.start_session().await.expect("session");

    let outcome = skills_agent::Runner::builder(model.clone())
        .build()
        .run_to_end(&mut session, "Summarize report.pdf")
        .await
        .expect("the server accepted every request");

    assert_eq!(outcome.text, "Done.");
    let bodies: Vec<String> = server.received().into_iter().map(|r| r.body).collect();
    let markers: Vec<usize> = bodies
        .iter()
        .map(|b| b.matches("\"cache_control\"").count())
        .collect();
    // Tools, system, latest turn; then the previous turn too.
    assert_eq!(markers, vec![3, 4]);
    let second: Value = serde_json::from_str(&bodies[1]).expect("json");
    let ephemeral = json!({"type": "ephemeral"});
    assert_eq!(second["tools"][1]["cache_control"], ephemeral);
    assert_eq!(second["system"][0]["cache_control"], ephemeral);
    assert_eq!(
        second["messages"][0]["content"][0]["cache_control"],
        ephemeral
    );
    assert_eq!(
        second["messages"][2]["content"][0]["cache_control"],
        ephemeral
    );

    // By hand: the request built for the model is the one the model sends.
    let request = session.build_request_for(model.as_ref());
    assert_eq!(request.cache_breakpoints.len(), 4);
    assert!(model.body(&request, true).contains("cache_control"));
    // `build_request` knows no model: no breakpoints (OpenAI-style).
    assert!(session.build_request().cache_breakpoints.is_empty());

    // An explicit strategy overrides the model's: this server refuses it.
    let server = Server::start_gated(anthropic_tool_round(), markers_required).await;
    let model =
        std::sync::Arc::new(Anthropic::new(&server.base, "k", "claude-test").with_http(fast()));
    let agent = agent_with_one_skill(Some(skills_agent::CacheStrategy::AutomaticPrefix));
    let mut session = agent.start_session().await.expect("session");
    let error = skills_agent::Runner::builder(model)
        .build()
        .run_to_end(&mut session, "Summarize report.pdf")
        .await
        .expect_err("refused without markers");
    assert!(
        error.to_string().contains("requires cache_control markers"),
        "{error}"
    );
    assert_eq!(server.received().len(), 1);
}

/// OpenAI-compatible models keep the automatic prefix: no markers.
#[tokio::test]
async fn openai_requests_carry_no_cache_markers() {
    let server = Server::start(vec![Reply::sse(&[
        (
            None,
            chat_chunk(json!({"role": "assistant", "content": "Hi."}), None),
        ),
        (None, chat_chunk(json!({}), Some("stop"))),
        (None, "[DONE]".to_owned()),
    ])])
    .await;
    let model = std::sync::Arc::new(
        OpenAiChat::new(format!("{}/v1", server.base), "k", "gpt-test").with_http(fast()),
    );
    let agent = agent_with_one_skill(None);
    assert_eq!(
        agent.cache_strategy_for(model.as_ref()),
        skills_agent::CacheStrategy::AutomaticPrefix
    );
    let mut session = agent.start_session().await.expect("session");
    let outcome = skills_agent::Runner::builder(model)
        .build()
        .run_to_end(&mut session, "hello")
        .await
        .expect("answer");
    assert_eq!(outcome.text, "Hi.");
    assert!(!server.received()[0].body.contains("cache_control"));
}

/// A server that knows only `/v1/...` paths: anything else is a plain
/// 404, as Ollama or an HTTP router answers.
fn only_v1(request: &Received) -> Option<Reply> {
    (!request.path.starts_with("/v1/")).then(|| Reply {
        status: 404,
        headers: vec![("content-type".into(), "text/plain".into())],
        body: b"404 page not found".to_vec(),
        piece: 0,
        drop: false,
        delay: Duration::ZERO,
    })
}

/// A base URL of the wrong form: the 404 names the URL tried and the fix,
/// and the unambiguous Anthropic `/v1` form is accepted.
#[tokio::test]
async fn base_url_mistakes_name_the_url_and_the_fix() {
    let server = Server::start_gated(Vec::new(), only_v1).await;
    // OpenAI without /v1.
    let model = OpenAiChat::new(&server.base, "k", "gpt-test").with_http(fast());
    let error = model.complete(&conversation(0)).await.expect_err("404");
    assert_eq!(error.kind(), ModelErrorKind::Request);
    assert_eq!(error.status(), Some(404));
    assert_eq!(
        error.message(),
        format!(
            "404 page not found (POST {0}/chat/completions); the base URL usually ends in /v1: \
             try {0}/v1",
            server.base
        )
    );
    let model =
        OpenAiResponses::new(format!("{}/", server.base), "k", "gpt-test").with_http(fast());
    let error = model.complete(&conversation(0)).await.expect_err("404");
    assert!(
        error
            .message()
            .contains(&format!("(POST {}/responses)", server.base)),
        "{error}"
    );

    // Anthropic with /v1: taken as meant.
    let server = Server::start_gated(
        vec![Reply::json(
            200,
            json!({"content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn"}),
        )],
        only_v1,
    )
    .await;
    let model = Anthropic::new(format!("{}/v1/", server.base), "k", "m").with_http(fast());
    assert_eq!(model.url(), format!("{}/v1/messages", server.base));
    let answer = model.complete(&conversation(0)).await.expect("answer");
    assert_eq!(answer.message.content, "ok");
    assert_eq!(server.received()[0].path, "/v1/messages");

    // Anthropic at a wrong root.
    let model = Anthropic::new(format!("{}/api", server.base), "k", "m").with_http(fast());
    let error = model.complete(&conversation(0)).await.expect_err("404");
    assert!(
        error.message().ends_with(
            "/api/v1/messages); the base URL should be the server's root, without /v1: \
             requests go to the base URL + /v1/messages"
        ),
        "{error}"
    );
}

/// A refused connection names the URL and what to check.
#[tokio::test]
async fn a_refused_connection_names_the_url() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let address = listener.local_addr().expect("addr");
    drop(listener);
    let model = Anthropic::new(format!("http://user:secret@{address}"), "k", "m")
        .with_http(fast().max_retries(0));
    let error = model.complete(&conversation(0)).await.expect_err("refused");
    assert_eq!(error.kind(), ModelErrorKind::Connection);
    let message = error.message();
    assert!(
        message.starts_with(&format!("cannot connect to http://{address}/v1/messages: ")),
        "{message}"
    );
    assert!(
        message.ends_with("; is the server running, and is the base URL right?"),
        "{message}"
    );
    assert!(!message.contains("secret"), "{message}");
}

#[tokio::test]
async fn no_retries_when_turned_off() {
    let server = Server::start(vec![Reply::json(
        503,
        json!({"error": {"message": "busy", "type": "server_error"}}),
    )])
    .await;
    let model = OpenAiResponses::new(format!("{}/v1", server.base), "k", "m")
        .with_http(fast().max_retries(0));

    let error = model.complete(&conversation(0)).await.expect_err("503");

    assert_eq!(error.kind(), ModelErrorKind::Server);
    assert_eq!(error.status(), Some(503));
    assert_eq!(error.retries(), 0);
    assert_eq!(error.to_string(), "server (HTTP 503): server_error: busy");
    assert_eq!(server.received().len(), 1);
}

#[test]
fn keys_never_show_in_debug_output() {
    let models: Vec<Box<dyn Model>> = vec![
        Box::new(OpenAiChat::new("http://127.0.0.1:1/v1", "sk-secret-1", "m")),
        Box::new(OpenAiResponses::new(
            "http://127.0.0.1:1/v1",
            "sk-secret-2",
            "m",
        )),
        Box::new(Anthropic::new("http://127.0.0.1:1", "sk-secret-3", "m")),
    ];
    for model in &models {
        let debug = format!("{model:?}");
        assert!(!debug.contains("sk-secret"), "{debug}");
        assert!(debug.contains("127.0.0.1:1"), "{debug}");
    }
}

/// Parallel calls that finish out of order are reported in the order they
/// finished, and the completed answer lists them the same way.
#[test]
fn responses_calls_finishing_out_of_order_keep_one_order() {
    use skills_models::fuzzing::{Wire, decode_stream};

    let call = |index: u64, id: &str| json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": id, "name": "t", "arguments": format!("{{\"i\":{index}}}")});
    let events = [
        json!({"type": "response.output_item.added", "output_index": 0, "item": call(0, "a")}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": call(1, "b")}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": call(1, "b")}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": call(0, "a")}),
        json!({"type": "response.completed", "response": {"status": "completed", "output": [call(0, "a"), call(1, "b")]}}),
    ];
    let body: String = events
        .iter()
        .map(|e| {
            format!(
                "event: {}\ndata: {e}\n\n",
                e["type"].as_str().unwrap_or_default()
            )
        })
        .collect();

    let got = decode_stream(Wire::OpenAiResponses, vec![body.into_bytes()]);

    let ids: Vec<String> = calls_of(&got).into_iter().map(|c| c.id).collect();
    assert_eq!(ids, ["b", "a"]);
    let answer: Vec<String> = completed(&got)
        .message
        .tool_calls
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(answer, ids);
}
