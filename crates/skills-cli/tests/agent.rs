//! End-to-end tests of `skills agent`: the real binary against a real HTTP
//! server on 127.0.0.1 that answers in the OpenAI and Anthropic streaming
//! shapes.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;

fn examples() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/skills").to_owned()
}

/// A server that answers each request with the next canned SSE body and
/// records the request bodies and paths.
struct Server {
    url: String,
    bodies: Arc<Mutex<Vec<String>>>,
    paths: Arc<Mutex<Vec<String>>>,
}

/// One canned reply: status code, content type, body.
type Reply = (u16, &'static str, String);

/// A server on 127.0.0.1 that answers request `i` with `reply(i)` (until it
/// gives `None`) and records the request bodies.
fn serve_with(reply: impl Fn(usize) -> Option<Reply> + Send + 'static) -> Server {
    serve_checked(move |i, _, _| reply(i))
}

/// A server on 127.0.0.1 that answers request `i` to `path` with body
/// `body` by `reply(i, path, body)` (until it gives `None`) and records the
/// request bodies and paths.
fn serve_checked(reply: impl Fn(usize, &str, &str) -> Option<Reply> + Send + 'static) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let paths = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&bodies);
    let seen_paths = Arc::clone(&paths);
    thread::spawn(move || {
        for i in 0.. {
            let Ok((stream, _)) = listener.accept() else {
                return;
            };
            let Some((path, request, mut stream)) = read_request(stream) else {
                continue;
            };
            let answer = reply(i, &path, &request);
            seen.lock().unwrap().push(request);
            seen_paths.lock().unwrap().push(path);
            let Some((status, content_type, body)) = answer else {
                return;
            };
            let reason = if status == 200 { "OK" } else { "Error" };
            let _ = write!(
                stream,
                "HTTP/1.1 {status} {reason}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    Server { url, bodies, paths }
}

/// Reads one HTTP request from `stream`: its path and body, and the stream
/// to answer on (`None` when the client went away first).
fn read_request(stream: TcpStream) -> Option<(String, String, TcpStream)> {
    let mut reader = BufReader::new(stream);
    let mut length = 0usize;
    let mut path = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return None;
        }
        if path.is_empty() {
            path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    let body = String::from_utf8_lossy(&body).into_owned();
    Some((path, body, reader.into_inner()))
}

/// A server giving these SSE bodies in order.
fn serve(replies: Vec<String>) -> Server {
    serve_with(move |i| {
        replies
            .get(i)
            .map(|r| (200, "text/event-stream", r.clone()))
    })
}

fn sse(events: &[&str]) -> String {
    events.iter().map(|e| format!("data: {e}\n\n")).collect()
}

fn skills(args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skills"));
    cmd.args(args)
        .env_remove("SKILLS_ROOT")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    } else {
        drop(child.stdin.take());
    }
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn openai_replies() -> Vec<String> {
    vec![
        sse(&[
            r#"{"id":"r1","model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"load_skill","arguments":""}}]},"finish_reason":null}]}"#,
            r#"{"id":"r1","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"name\":"}}]},"finish_reason":null}]}"#,
            r#"{"id":"r1","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"commit-message\"}"}}]},"finish_reason":null}]}"#,
            r#"{"id":"r1","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"id":"r1","model":"m","choices":[],"usage":{"prompt_tokens":900,"completion_tokens":12,"prompt_tokens_details":{"cached_tokens":0}}}"#,
            "[DONE]",
        ]),
        sse(&[
            r#"{"id":"r2","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Fix parser "},"finish_reason":null}]}"#,
            r#"{"id":"r2","model":"m","choices":[{"index":0,"delta":{"content":"crash on empty input"},"finish_reason":null}]}"#,
            r#"{"id":"r2","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            r#"{"id":"r2","model":"m","choices":[],"usage":{"prompt_tokens":1400,"completion_tokens":8,"prompt_tokens_details":{"cached_tokens":896}}}"#,
            "[DONE]",
        ]),
    ]
}

#[test]
fn streams_the_answer_and_shows_skill_loads_and_tool_calls() {
    let server = serve(openai_replies());
    let out = skills(
        &[
            "agent",
            "--model",
            "openai:test-model",
            "--prompt",
            "-",
            &examples(),
        ],
        &[
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", &server.url),
        ],
        Some("Write a commit message for the parser fix."),
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout, "Fix parser crash on empty input\n");
    assert!(
        stderr.contains("[tool] load_skill {\"name\":\"commit-message\"}"),
        "{stderr}"
    );
    assert!(stderr.contains("[skill] loaded commit-message"), "{stderr}");
    let bodies = server.bodies.lock().unwrap();
    assert_eq!(bodies.len(), 2);
    assert!(bodies[0].contains("\"model\":\"test-model\""));
    assert!(bodies[0].contains("\"stream\":true"));
    assert!(bodies[0].contains("Write a commit message for the parser fix."));
    // The second request extends the first byte for byte.
    let first = bodies[0].trim_end_matches([']', '}']);
    assert!(
        bodies[1].starts_with(first),
        "{}\n---\n{}",
        bodies[0],
        bodies[1]
    );
}

#[test]
fn json_prints_every_event_as_one_line() {
    let server = serve(openai_replies());
    let out = skills(
        &[
            "agent",
            "--json",
            "--model",
            "openai:test-model",
            "--prompt",
            "Write a commit message.",
            &examples(),
        ],
        &[
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", &server.url),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let events: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"request_sent"));
    assert_eq!(kinds.last(), Some(&"finished"));
    assert!(
        kinds.contains(&"tool_call") && kinds.contains(&"skill"),
        "{kinds:?}"
    );
    let last = events.last().unwrap();
    assert_eq!(last["outcome"]["text"], "Fix parser crash on empty input");
    assert_eq!(last["outcome"]["usage"]["cache_read_tokens"], 896);
    assert_eq!(last["outcome"]["requests"][1]["extends_previous"], true);
}

#[test]
fn anthropic_streams_too() {
    let replies = vec![
        [
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m1\",\"model\":\"claude-test\",\"usage\":{\"input_tokens\":50,\"cache_read_input_tokens\":0,\"cache_creation_input_tokens\":700,\"output_tokens\":1}}}\n\n",
            "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
            "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello from Claude.\"}}\n\n",
            "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
            "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":5}}\n\n",
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        ]
        .concat(),
    ];
    let server = serve(replies);
    let out = skills(
        &[
            "agent",
            "--model",
            "anthropic:claude-test",
            "--max-tokens",
            "1000",
            "--prompt",
            "hi",
            &examples(),
        ],
        &[
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("ANTHROPIC_BASE_URL", &server.url),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "Hello from Claude.\n");
    let bodies = server.bodies.lock().unwrap();
    assert!(bodies[0].contains("\"max_tokens\":1000"), "{}", bodies[0]);
}

#[test]
fn without_a_key_it_says_what_to_set_and_exits_2() {
    for (model, var) in [
        ("openai:gpt-4.1", "OPENAI_API_KEY"),
        ("openai-responses:gpt-4.1", "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
    ] {
        let out = skills(
            &["agent", "--model", model, "--prompt", "hi", &examples()],
            &[],
            None,
        );
        assert_eq!(out.status.code(), Some(2), "{model}");
        let stderr = text(&out.stderr);
        assert!(stderr.contains(var), "{model}: {stderr}");
        assert!(out.stdout.is_empty());
    }
    let out = skills(
        &["agent", "--model", "gpt-4.1", "--prompt", "hi", &examples()],
        &[],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("PROVIDER:MODEL"));
}

#[test]
fn an_http_error_after_retries_exits_1_with_the_providers_message() {
    // A server that answers every request with a 404 and an OpenAI error body.
    let server = serve_with(|_| {
        let body = r#"{"error":{"message":"The model `nope` does not exist","type":"invalid_request_error"}}"#;
        Some((404, "application/json", body.to_owned()))
    });
    let url = server.url.clone();
    let out = skills(
        &[
            "agent",
            "--model",
            "openai:nope",
            "--prompt",
            "hi",
            &examples(),
        ],
        &[("OPENAI_API_KEY", "sk-test"), ("OPENAI_BASE_URL", &url)],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("does not exist"), "{stderr}");
    assert!(stderr.contains("404"), "{stderr}");
}

fn run_replies() -> Vec<String> {
    let call = openai_call;
    vec![
        call("c1", "load_skill", r#"{"name":"csv-insights"}"#),
        call(
            "c2",
            "run_skill_command",
            r#"{"skill":"csv-insights","command":"python3 scripts/profile_csv.py assets/sample-orders.csv"}"#,
        ),
        sse(&[
            r#"{"id":"r","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"10 rows."},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ]),
    ]
}

/// `--run local` gives the model the run tools: the command really runs in
/// the skill's folder, and its output reaches the model.
#[test]
fn run_local_lets_the_model_run_a_skill_script() {
    let server = serve(run_replies());
    let out = skills(
        &[
            "agent",
            "--run",
            "local",
            "--model",
            "openai:test-model",
            "--prompt",
            "Profile the sample orders.",
            &examples(),
        ],
        &[
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", &server.url),
        ],
        None,
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(text(&out.stdout), "10 rows.\n");
    assert!(stderr.contains("[tool] run_skill_command"), "{stderr}");
    let bodies = server.bodies.lock().unwrap();
    assert!(
        bodies[0].contains("\"name\":\"run_skill_command\""),
        "the tool is offered"
    );
    assert!(bodies[2].contains("- Rows: 10"), "{}", bodies[2]);
    assert!(bodies[2].contains("exit_code"), "{}", bodies[2]);
}

/// `--run container`: the model's command runs in a container of its own
/// (engine from DOCKER_HOST, image from SKILLS_CONTAINER_IMAGE), and its
/// output reaches the model.
#[test]
fn run_container_runs_the_model_s_command_in_a_container() {
    let call = openai_call;
    let server = serve(vec![
        call("c1", "load_skill", r#"{"name":"csv-insights"}"#),
        call(
            "c2",
            "run_skill_command",
            r#"{"skill":"csv-insights","command":"echo host=$(hostname) uid=$(id -u); wc -l < assets/sample-orders.csv"}"#,
        ),
        sse(&[
            r#"{"id":"r","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"done."},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ]),
    ]);
    let container = crate::support::container_env();
    let mut env: Vec<(&str, &str)> = vec![
        ("OPENAI_API_KEY", "sk-test"),
        ("OPENAI_BASE_URL", &server.url),
    ];
    env.extend(container.iter().map(|(k, v)| (*k, v.as_str())));
    let out = skills(
        &[
            "agent",
            "--run",
            "container",
            "--model",
            "openai:test-model",
            "--prompt",
            "Count the sample orders.",
            &examples(),
        ],
        &env,
        None,
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(text(&out.stdout), "done.\n");
    let bodies = server.bodies.lock().unwrap();
    let uid = current_uid();
    let user = if uid == "0" { "65534" } else { uid.as_str() };
    let line = format!("host=skills-container uid={user}");
    let at = bodies[2]
        .find(&line)
        .unwrap_or_else(|| panic!("no {line:?} in {}", bodies[2]));
    // Then the line count of the sample, on the next line of the output.
    let after = &bodies[2][at + line.len()..];
    assert!(after[..12.min(after.len())].contains("11"), "{}", bodies[2]);
}

/// This process's user id.
fn current_uid() -> String {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

/// Without `--run` the model has no run tool: the call gets an error result.
#[test]
fn without_run_the_run_tool_does_not_exist() {
    let server = serve(run_replies());
    let out = skills(
        &[
            "agent",
            "--model",
            "openai:test-model",
            "--prompt",
            "Profile the sample orders.",
            &examples(),
        ],
        &[
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", &server.url),
        ],
        None,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bodies = server.bodies.lock().unwrap();
    assert!(!bodies[0].contains("run_skill_command"));
    assert!(
        bodies[2].contains("no tool named `run_skill_command`"),
        "{}",
        bodies[2]
    );
}

/// An OpenAI streaming reply with just `text`.
fn openai_text_reply(text: &str) -> String {
    let delta = serde_json::json!({"id":"r9","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":text},"finish_reason":null}]});
    sse(&[
        &delta.to_string(),
        r#"{"id":"r9","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        r#"{"id":"r9","model":"m","choices":[],"usage":{"prompt_tokens":1500,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":1400}}}"#,
        "[DONE]",
    ])
}

/// `skills agent --session URL` with an OpenAI server; returns the output and
/// the request bodies.
fn agent_in_session(url: &str, prompt: &str, replies: Vec<String>) -> (Output, Vec<String>) {
    let server = serve(replies);
    let out = skills(
        &[
            "agent",
            "--model",
            "openai:test-model",
            "--session",
            url,
            "--prompt",
            prompt,
            &examples(),
        ],
        &[
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", &server.url),
        ],
        None,
    );
    let bodies = server.bodies.lock().unwrap().clone();
    (out, bodies)
}

#[test]
fn a_session_url_continues_the_conversation_in_a_new_process() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("sessions.db").display());
    let (first, before) = agent_in_session(&url, "Write a commit message.", openai_replies());
    assert!(first.status.success(), "{}", text(&first.stderr));
    assert_eq!(before.len(), 2);

    let (second, after) = agent_in_session(
        &url,
        "Shorter please.",
        vec![openai_text_reply("Fix parser crash")],
    );
    assert!(second.status.success(), "{}", text(&second.stderr));
    assert_eq!(text(&second.stdout), "Fix parser crash\n");
    // The first request of the new process extends the last one of the old
    // byte for byte: same tools, system prompt and history, then the
    // model's answer and the new question.
    let prefix = before[1].trim_end_matches([']', '}']);
    assert!(
        after[0].starts_with(prefix),
        "{}\n---\n{}",
        before[1],
        after[0]
    );
    let rest = &after[0][prefix.len()..];
    assert!(rest.contains("Fix parser crash on empty input"), "{rest}");
    assert!(rest.contains("Shorter please."), "{rest}");

    // Another session id in the same store starts afresh.
    let server = serve(vec![openai_text_reply("Hi")]);
    let other = skills(
        &[
            "agent",
            "--model",
            "openai:test-model",
            "--session",
            &url,
            "--session-id",
            "second",
            "--prompt",
            "Hello",
            &examples(),
        ],
        &[
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", &server.url),
        ],
        None,
    );
    assert!(other.status.success(), "{}", text(&other.stderr));
    assert!(!server.bodies.lock().unwrap()[0].contains("Shorter please."));

    // `skills sessions list` and `show` print what is stored.
    let list = skills(&["sessions", "list", &url], &[], None);
    assert!(list.status.success(), "{}", text(&list.stderr));
    let table = text(&list.stdout);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    assert!(
        lines[0].starts_with("ID") && lines[0].contains("EVENTS"),
        "{table}"
    );
    assert!(lines[1].starts_with("default  skills"), "{table}");
    assert!(lines[2].starts_with("second   skills"), "{table}");

    let list = skills(&["sessions", "list", "--json", &url], &[], None);
    let listed: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(listed[0]["id"], "default");
    assert_eq!(listed[0]["agent"], "skills");
    let events = listed[0]["next_seq"].as_u64().unwrap();

    let show = skills(&["sessions", "show", &url, "default"], &[], None);
    assert!(show.status.success(), "{}", text(&show.stderr));
    let transcript = text(&show.stdout);
    assert!(transcript.starts_with(&format!("session default (agent skills, {events} events)\n#0 started: agent skills, pinned catalog of")), "{transcript}");
    for expected in [
        "user:\n    Write a commit message.",
        "    -> load_skill {\"name\":\"commit-message\"}",
        "tool load_skill:",
        "loaded: commit-message",
        "assistant:\n    Fix parser crash on empty input",
        "usage: 2300 tokens in (896 cached), 20 out",
        "user:\n    Shorter please.",
    ] {
        assert!(
            transcript.contains(expected),
            "missing {expected:?} in\n{transcript}"
        );
    }

    let show = skills(&["sessions", "show", "--json", &url, "default"], &[], None);
    let shown: serde_json::Value = serde_json::from_slice(&show.stdout).unwrap();
    assert_eq!(shown["session"]["id"], "default");
    assert_eq!(shown["events"].as_array().unwrap().len() as u64, events);
    assert_eq!(shown["events"][0]["event"]["type"], "started");

    // Without an id, a store of two sessions asks for one.
    let ambiguous = skills(&["sessions", "show", &url], &[], None);
    assert_eq!(ambiguous.status.code(), Some(2));
    assert!(
        text(&ambiguous.stderr).contains("name one: default, second"),
        "{}",
        text(&ambiguous.stderr)
    );
    let missing = skills(&["sessions", "show", &url, "nope"], &[], None);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        text(&missing.stderr).contains("no session `nope`"),
        "{}",
        text(&missing.stderr)
    );
}

#[test]
fn a_bad_session_url_is_a_usage_error_before_any_request() {
    let server = serve(vec![]);
    let out = skills(
        &[
            "agent",
            "--model",
            "openai:m",
            "--session",
            "mysql://x",
            "--prompt",
            "hi",
            &examples(),
        ],
        &[
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", &server.url),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("unsupported session store URL scheme `mysql`"),
        "{}",
        text(&out.stderr)
    );
    assert!(server.bodies.lock().unwrap().is_empty());
    let list = skills(&["sessions", "list", "sqlite://"], &[], None);
    assert_eq!(list.status.code(), Some(2));
}

#[test]
fn reading_a_missing_sqlite_store_is_an_error_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("typo.db");
    let url = format!("sqlite://{}", path.display());
    for args in [
        vec!["sessions", "list", url.as_str()],
        vec!["sessions", "show", url.as_str()],
    ] {
        let out = skills(&args, &[], None);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).contains("the SQLite file does not exist"),
            "{}",
            text(&out.stderr)
        );
    }
    assert!(
        !path.exists(),
        "reading the store created {}",
        path.display()
    );
}

/// An Anthropic streaming reply: `message_start` with these token counts,
/// the content blocks, then the stop reason.
fn anthropic_reply(usage: (u64, u64, u64), blocks: &[serde_json::Value], stop: &str) -> String {
    let (input, read, created) = usage;
    let mut events = vec![
        serde_json::json!({"type": "message_start", "message": {"id": "msg", "model": "claude-test",
        "usage": {"input_tokens": input, "cache_read_input_tokens": read, "cache_creation_input_tokens": created, "output_tokens": 1}}}),
    ];
    for (index, block) in blocks.iter().enumerate() {
        match block["type"].as_str() {
            Some("tool_use") => {
                events.push(serde_json::json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}));
                events.push(serde_json::json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": block["input"].to_string()}}));
            }
            _ => {
                events.push(
                    serde_json::json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "text", "text": ""}}),
                );
                events.push(
                    serde_json::json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": block["text"]}}),
                );
            }
        }
        events.push(serde_json::json!({"type": "content_block_stop", "index": index}));
    }
    events.push(serde_json::json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 7}}));
    events.push(serde_json::json!({"type": "message_stop"}));
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

/// An Anthropic-compatible server that insists on prompt caching: a request
/// without `cache_control` markers gets HTTP 400.
fn serve_anthropic_requiring_markers(replies: Vec<String>) -> Server {
    serve_checked(move |i, path, body| {
        if path != "/v1/messages" {
            return Some((404, "text/plain", "no such route".to_owned()));
        }
        if !body.contains("\"cache_control\"") {
            let error = r#"{"type":"error","error":{"type":"invalid_request_error","message":"this server requires cache_control markers"}}"#;
            return Some((400, "application/json", error.to_owned()));
        }
        replies
            .get(i)
            .map(|r| (200, "text/event-stream", r.clone()))
    })
}

/// `skills agent --model anthropic:…` sends the cache markers Anthropic
/// needs without any option (tools, system, latest turn; then the previous
/// turn too) and prints each request's cache share on standard error.
#[test]
fn anthropic_requests_carry_cache_markers_and_the_cache_share_is_shown() {
    let server = serve_anthropic_requiring_markers(vec![
        anthropic_reply(
            (40, 0, 1800),
            &[
                serde_json::json!({"type": "tool_use", "id": "toolu_1", "name": "load_skill", "input": {"name": "commit-message"}}),
            ],
            "tool_use",
        ),
        anthropic_reply(
            (60, 1800, 350),
            &[serde_json::json!({"type": "text", "text": "Fix parser crash on empty input"})],
            "end_turn",
        ),
    ]);
    // ANTHROPIC_BASE_URL with /v1 is taken as meant.
    let base = format!("{}/v1", server.url);
    let out = skills(
        &[
            "agent",
            "--model",
            "anthropic:claude-test",
            "--prompt",
            "Write a commit message for the parser fix.",
            &examples(),
        ],
        &[
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("ANTHROPIC_BASE_URL", &base),
        ],
        None,
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout, "Fix parser crash on empty input\n");
    let bodies = server.bodies.lock().unwrap().clone();
    let markers: Vec<usize> = bodies
        .iter()
        .map(|b| b.matches("\"cache_control\"").count())
        .collect();
    eprintln!("cache_control markers per request of `skills agent`: {markers:?}");
    assert_eq!(markers, vec![3, 4]);
    assert_eq!(
        *server.paths.lock().unwrap(),
        vec!["/v1/messages", "/v1/messages"]
    );
    assert!(
        stderr.contains(
            "[usage] request 1: 1 840 input tokens, 0 cached (0.0 %), 1 800 written to the cache, 7 output"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "[usage] request 2: 2 210 input tokens, 1 800 cached (81.4 %), 350 written to the cache, 7 output"
        ),
        "{stderr}"
    );
}

/// A base URL of the wrong form: the error names the URL tried and the fix.
#[test]
fn a_base_url_without_v1_names_the_url_and_the_fix() {
    let server = serve_checked(|_, path, _| {
        if path.starts_with("/v1/") {
            Some((200, "text/event-stream", openai_text_reply("Hi")))
        } else {
            Some((404, "text/plain", "404 page not found".to_owned()))
        }
    });
    let out = skills(
        &[
            "agent",
            "--model",
            "openai:m",
            "--prompt",
            "hi",
            &examples(),
        ],
        &[
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", &server.url),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "404 page not found (POST {0}/chat/completions); OPENAI_BASE_URL usually ends in \
             /v1: try {0}/v1",
            server.url
        )),
        "{stderr}"
    );
    // Nothing listens: the error names the URL and the variable.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener);
    let out = skills(
        &[
            "agent",
            "--model",
            "anthropic:m",
            "--prompt",
            "hi",
            &examples(),
        ],
        &[
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("ANTHROPIC_BASE_URL", &format!("http://{address}")),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("cannot connect to http://{address}/v1/messages: ")),
        "{stderr}"
    );
    assert!(stderr.contains("is ANTHROPIC_BASE_URL right?"), "{stderr}");
}

/// The escape sequences an answer may carry: a window title, a clipboard
/// write (OSC 52), a screen clear and an 8-bit CSI (a `\r\n` line end is
/// harmless and kept).
const HOSTILE_TEXT: &str =
    "Done.\u{1b}]0;pwned\u{7}\u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2J\u{9b}31m\r\n\tok\n";

fn hostile_server() -> Server {
    serve(vec![openai_text_reply(HOSTILE_TEXT)])
}

fn assert_defused(output: &str) {
    assert!(
        !output.contains('\u{1b}') && !output.contains('\u{9b}') && !output.contains('\u{7}'),
        "a raw control character reached the output: {output:?}"
    );
    assert!(
        output
            .contains("Done.\\x1b]0;pwned\\x07\\x1b]52;c;ZXZpbA==\\x07\\x1b[2J\\x9b31m\r\n\tok\n"),
        "{output:?}"
    );
}

/// `skills agent` with `extra` options against a server whose answer is
/// [`HOSTILE_TEXT`].
fn agent_on_hostile_text(extra: &[&str]) -> Output {
    let server = hostile_server();
    let mut args = vec!["agent"];
    args.extend_from_slice(extra);
    let examples = examples();
    args.extend(["--model", "openai:m", "--prompt", "hi", examples.as_str()]);
    skills(
        &args,
        &[
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", server.url.as_str()),
        ],
        None,
    )
}

/// Model text with terminal escapes is printed with its control characters
/// escaped (newlines and tabs kept); `--json` escapes them as JSON does.
#[test]
fn escape_sequences_in_the_answer_never_reach_the_output() {
    let out = agent_on_hostile_text(&[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_defused(&text(&out.stdout));
    assert!(!text(&out.stderr).contains('\u{1b}'));

    let out = agent_on_hostile_text(&["--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(!stdout.contains('\u{1b}'), "{stdout:?}");
    let last: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    // The JSON keeps the text exact: a program reading it gets what the
    // model wrote.
    assert_eq!(last["outcome"]["text"], HOSTILE_TEXT);
}

/// The same on a real terminal: `script` runs `skills agent` with a
/// pseudo-terminal as its standard output.
#[test]
fn escape_sequences_never_reach_a_terminal() {
    let script = std::path::Path::new("/usr/bin/script");
    assert!(
        script.exists(),
        "this test needs `script` (util-linux) to give the command a terminal"
    );
    let server = hostile_server();
    let command = format!(
        "{} agent --model openai:m --prompt hi {}",
        env!("CARGO_BIN_EXE_skills"),
        examples()
    );
    let out = Command::new(script)
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .env_remove("SKILLS_ROOT")
        .env_remove("RUST_LOG")
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_BASE_URL", &server.url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The terminal turns `\n` into `\r\n`; nothing else is added.
    let screen = text(&out.stdout).replace("\r\n", "\n");
    assert_defused(&screen);
}

/// A server that answers with `head` and then `piece` forever (until the
/// client hangs up, or 2 GiB as a safety stop); returns the bytes written.
fn serve_endless(head: String, piece: Vec<u8>) -> (String, thread::JoinHandle<usize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let handle = thread::spawn(move || {
        let Ok((stream, _)) = listener.accept() else {
            return 0;
        };
        let Some((_, _, mut stream)) = read_request(stream) else {
            return 0;
        };
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n{head}"
        );
        if stream.write_all(head.as_bytes()).is_err() {
            return 0;
        }
        let mut written = head.len();
        while written < 2 << 30 {
            if stream.write_all(&piece).is_err() {
                break;
            }
            written += piece.len();
        }
        written
    });
    (url, handle)
}

/// `skills agent` under a data-size limit (`prlimit --data`) far below what
/// an unbounded answer would take.
fn skills_limited(args: &[&str], env: &[(&str, &str)]) -> Output {
    let prlimit = std::path::Path::new("/usr/bin/prlimit");
    assert!(
        prlimit.exists(),
        "this test needs `prlimit` (util-linux) to bound the command's memory"
    );
    let mut cmd = Command::new(prlimit);
    cmd.arg(format!("--data={}", 512 << 20))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_skills"))
        .args(args)
        .env_remove("SKILLS_ROOT")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// A model server that streams forever, or sends one endless line, ends the
/// run with a typed error at the default caps (64 MiB per answer, 16 MiB per
/// event) while the process stays under a 512 MiB data limit: unbounded
/// buffering would have been killed by it.
#[test]
fn an_endless_answer_or_line_stops_at_the_caps() {
    let start = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"m\",\"usage\":{\"input_tokens\":1}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    );
    let delta = serde_json::json!({"type": "content_block_delta", "index": 0,
        "delta": {"type": "text_delta", "text": "a".repeat(4000)}});
    let piece = format!("event: content_block_delta\ndata: {delta}\n\n").into_bytes();
    let (url, server) = serve_endless(start.to_owned(), piece);
    let out = skills_limited(
        &[
            "agent",
            "--model",
            "anthropic:m",
            "--prompt",
            "hi",
            &examples(),
        ],
        &[
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("ANTHROPIC_BASE_URL", &url),
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("answer-too-large"), "{stderr}");
    assert!(stderr.contains("more than 64 MiB"), "{stderr}");
    let sent = server.join().unwrap();
    assert!(sent < 128 << 20, "the server pushed {sent} bytes");
    // What was printed before the cap is the model's text, escaped.
    assert!(out.stdout.len() <= 64 << 20);

    let (url, server) = serve_endless("data: {\"id\":\"".to_owned(), vec![b'x'; 64 * 1024]);
    let out = skills_limited(
        &[
            "agent",
            "--model",
            "openai:m",
            "--prompt",
            "hi",
            &examples(),
        ],
        &[
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", &format!("{url}/v1")),
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("event-too-large"), "{stderr}");
    let sent = server.join().unwrap();
    assert!(sent < 64 << 20, "the server pushed {sent} bytes");
}

/// A folder with one skill `name` whose frontmatter has `extra` lines.
fn skill_dir(name: &str, extra: &str, body: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let skill = dir.path().join(name);
    std::fs::create_dir(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        format!(
            "---\nname: {name}\ndescription: Does {name} work. Use when asked for {name}.\n{extra}---\n{body}\n"
        ),
    )
    .unwrap();
    dir
}

/// An OpenAI streaming reply calling `name` with `args` (JSON text).
fn openai_call(id: &str, name: &str, args: &str) -> String {
    let args = serde_json::to_string(args).unwrap();
    sse(&[
        &format!(
            r#"{{"id":"r","model":"m","choices":[{{"index":0,"delta":{{"role":"assistant","tool_calls":[{{"index":0,"id":"{id}","type":"function","function":{{"name":"{name}","arguments":{args}}}}}]}},"finish_reason":null}}]}}"#
        ),
        r#"{"id":"r","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        "[DONE]",
    ])
}

/// `skills agent` on `dir` with these extra flags, against `server`.
fn agent_with(server: &Server, dir: &std::path::Path, flags: &[&str]) -> Output {
    let mut args = vec![
        "agent",
        "--model",
        "openai:test-model",
        "--prompt",
        "Do the task.",
    ];
    args.extend_from_slice(flags);
    let dir = dir.to_str().unwrap();
    args.push(dir);
    skills(
        &args,
        &[
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", &server.url),
        ],
        None,
    )
}

/// Replies: load `skill` (a forked one), the sub-agent's answer, the
/// main answer.
fn fork_replies(skill: &str) -> Vec<String> {
    vec![
        openai_call("c1", "load_skill", &format!(r#"{{"name":"{skill}"}}"#)),
        openai_text_reply("SUB-ANSWER"),
        openai_text_reply("Done."),
    ]
}

/// `--model-alias NAME=PROVIDER:MODEL` fills the model hub: a forked skill
/// with `model: small` runs its sub-agent on `small-model`, the main loop
/// stays on --model.
#[test]
fn model_alias_runs_a_forked_skill_on_the_named_model() {
    let dir = skill_dir("digest", "context: fork\nmodel: small\n", "Write one line.");
    let server = serve(fork_replies("digest"));
    let out = agent_with(
        &server,
        dir.path(),
        &["--model-alias", "small=openai:small-model"],
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(text(&out.stdout), "Done.\n");
    let bodies = server.bodies.lock().unwrap();
    assert_eq!(bodies.len(), 3);
    assert!(
        bodies[0].contains(r#""model":"test-model""#),
        "{}",
        bodies[0]
    );
    assert!(
        bodies[1].contains(r#""model":"small-model""#),
        "{}",
        bodies[1]
    );
    assert!(bodies[1].contains("Write one line."), "{}", bodies[1]);
    assert!(
        bodies[2].contains(r#""model":"test-model""#),
        "{}",
        bodies[2]
    );
    assert!(bodies[2].contains("SUB-ANSWER"), "{}", bodies[2]);

    // Without the alias the same skill gets a tool error naming the hub.
    let server = serve(fork_replies("digest"));
    let out = agent_with(&server, dir.path(), &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bodies = server.bodies.lock().unwrap();
    assert_eq!(bodies.len(), 2, "no sub-agent request");
    assert!(bodies[1].contains("no model hub"), "{}", bodies[1]);
}

/// `model: inherit` (Claude Code) runs the fork on --model, no alias needed.
#[test]
fn model_inherit_forks_on_the_main_model() {
    let dir = skill_dir(
        "digest",
        "context: fork\nmodel: inherit\n",
        "Write one line.",
    );
    let server = serve(fork_replies("digest"));
    let out = agent_with(&server, dir.path(), &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bodies = server.bodies.lock().unwrap();
    assert_eq!(bodies.len(), 3);
    assert!(
        bodies[1].contains(r#""model":"test-model""#),
        "{}",
        bodies[1]
    );
    assert!(bodies[2].contains("SUB-ANSWER"), "{}", bodies[2]);
}

/// `--subagent NAME=INSTRUCTIONS` fills the agent hub: a forked skill with
/// `agent: reviewer` runs with those instructions.
#[test]
fn subagent_gives_a_forked_skill_its_agent() {
    let dir = skill_dir(
        "review",
        "context: fork\nagent: reviewer\n",
        "List problems.",
    );
    let server = serve(fork_replies("review"));
    let out = agent_with(
        &server,
        dir.path(),
        &["--subagent", "reviewer=REVIEWER-INSTRUCTIONS: be strict."],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bodies = server.bodies.lock().unwrap();
    assert_eq!(bodies.len(), 3);
    assert!(!bodies[0].contains("REVIEWER-INSTRUCTIONS"));
    assert!(bodies[1].contains("REVIEWER-INSTRUCTIONS"), "{}", bodies[1]);
    assert!(bodies[2].contains("SUB-ANSWER"), "{}", bodies[2]);
}

/// Malformed fork flags are usage errors before any request.
#[test]
fn bad_fork_flags_are_usage_errors_before_any_request() {
    let dir = skill_dir("digest", "", "Body.");
    for flags in [
        &["--model-alias", "small"][..],
        &["--model-alias", "inherit=openai:x"],
        &["--model-alias", "small=nowhere:x"],
        &["--subagent", "=text"],
        &["--allowed-tools", "maybe"],
    ] {
        let server = serve(Vec::new());
        let out = agent_with(&server, dir.path(), flags);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{flags:?}: {}",
            text(&out.stderr)
        );
        assert!(server.bodies.lock().unwrap().is_empty(), "{flags:?}");
    }
}

/// Replies: load `echoer`, run `echo hi`, run `touch x`, answer.
fn policy_replies() -> Vec<String> {
    vec![
        openai_call("c1", "load_skill", r#"{"name":"echoer"}"#),
        openai_call(
            "c2",
            "run_skill_command",
            r#"{"skill":"echoer","command":"echo hi"}"#,
        ),
        openai_call(
            "c3",
            "run_skill_command",
            r#"{"skill":"echoer","command":"touch x"}"#,
        ),
        openai_text_reply("Done."),
    ]
}

/// `--allowed-tools restrict|pre-approve`: the skill's `Bash(echo:*)`
/// covers the run tool's `echo hi`, not `touch x`; `off` refuses nothing.
#[test]
fn allowed_tools_patterns_cover_run_commands_by_their_command() {
    let dir = skill_dir("echoer", "allowed-tools: Bash(echo:*)\n", "Echo things.");
    for (mode, refused) in [("restrict", true), ("pre-approve", true), ("off", false)] {
        let server = serve(policy_replies());
        let out = agent_with(
            &server,
            dir.path(),
            &["--run", "local", "--allowed-tools", mode],
        );
        let stderr = text(&out.stderr);
        assert!(out.status.success(), "{mode}: {stderr}");
        let bodies = server.bodies.lock().unwrap();
        assert_eq!(bodies.len(), 4, "{mode}");
        assert!(
            bodies[2].contains(r#"\"stdout\": \"hi"#),
            "{mode}: {}",
            bodies[2]
        );
        let touch = &bodies[3];
        assert_eq!(
            touch.contains("not allowed") || touch.contains("did not approve"),
            refused,
            "{mode}: {touch}"
        );
        assert_eq!(
            stderr.contains("[tool error] run_skill_command"),
            refused,
            "{mode}: {stderr}"
        );
    }
}

/// `--grant-lifetime turn`: with a stored session, a grant ends with the
/// run that loaded the skill (the next `skills agent` is the next user
/// message); `load` keeps it while the skill stays loaded.
#[test]
fn grant_lifetime_turn_ends_the_grant_at_the_next_prompt() {
    let dir = skill_dir("echoer", "allowed-tools: Bash(echo:*)\n", "Echo things.");
    for (lifetime, second_refused) in [("load", false), ("turn", true)] {
        let store = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", store.path().join("s.db").display());
        let flags = [
            "--session",
            url.as_str(),
            "--run",
            "local",
            "--allowed-tools",
            "pre-approve",
            "--grant-lifetime",
            lifetime,
        ];
        let echo = || {
            openai_call(
                "c9",
                "run_skill_command",
                r#"{"skill":"echoer","command":"echo again"}"#,
            )
        };
        let first = serve(vec![
            openai_call("c1", "load_skill", r#"{"name":"echoer"}"#),
            echo(),
            openai_text_reply("Done."),
        ]);
        let out = agent_with(&first, dir.path(), &flags);
        assert!(out.status.success(), "{lifetime}: {}", text(&out.stderr));
        assert!(
            first.bodies.lock().unwrap()[2].contains(r#"\"stdout\": \"again"#),
            "{lifetime}"
        );
        let second = serve(vec![echo(), openai_text_reply("Done again.")]);
        let out = agent_with(&second, dir.path(), &flags);
        assert!(out.status.success(), "{lifetime}: {}", text(&out.stderr));
        let bodies = second.bodies.lock().unwrap();
        let last = bodies[1].rsplit("\"tool_call_id\"").nth(1).unwrap_or("");
        assert_eq!(
            last.contains("did not approve"),
            second_refused,
            "{lifetime}: {}",
            bodies[1]
        );
    }
}

/// `--run local` with the runtime flags: the model's run stages a
/// `host://` input from an `--allow-input` folder, and `--save-artifacts`
/// saves what it wrote into the `--artifacts` folder.
#[test]
fn run_local_with_artifacts_and_host_inputs() {
    let tmp = tempfile::tempdir().unwrap();
    let host = tmp.path().join("host");
    std::fs::create_dir_all(&host).unwrap();
    std::fs::write(host.join("orders.csv"), "id\n1\n2\n").unwrap();
    let store = tmp.path().join("store");
    let args = serde_json::json!({
        "skill": "csv-insights",
        "command": "wc -l < $WORK_DIR/inputs/orders.csv > out/count.txt",
        "inputs": [{"from": format!("host://{}", host.join("orders.csv").display())}],
        "output_files": ["out/*.txt"]
    })
    .to_string();
    let mut replies = run_replies();
    let call = replies.remove(1);
    let call = call.replace(
        &serde_json::to_string(
            r#"{"skill":"csv-insights","command":"python3 scripts/profile_csv.py assets/sample-orders.csv"}"#,
        )
        .unwrap(),
        &serde_json::to_string(&args).unwrap(),
    );
    replies.insert(1, call);
    let server = serve(replies);
    let out = skills(
        &[
            "agent",
            "--run",
            "local",
            "--allow-input",
            host.to_str().unwrap(),
            "--artifacts",
            store.to_str().unwrap(),
            "--save-artifacts",
            "--model",
            "openai:test-model",
            "--prompt",
            "Count the orders.",
            &examples(),
        ],
        &[
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", &server.url),
        ],
        None,
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let bodies = server.bodies.lock().unwrap();
    assert!(bodies[2].contains(r#"\"exit_code\": 0"#), "{}", bodies[2]);
    assert!(bodies[2].contains("artifact_files"), "{}", bodies[2]);
    let sessions: Vec<_> = std::fs::read_dir(&store).unwrap().collect();
    assert_eq!(sessions.len(), 1);
    let session = sessions.into_iter().next().unwrap().unwrap().path();
    assert_eq!(
        std::fs::read_to_string(session.join("count%2Etxt/1")).unwrap(),
        "3\n"
    );
}

/// `--attach`: the model's first request carries the file as a part, and
/// with `--run local` the command the model runs finds it in
/// `$WORK_DIR/inputs/`. A missing file, or runtime flags without `--run`,
/// are usage errors before any request.
#[test]
fn attach_sends_the_file_and_stages_it_for_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("orders.csv");
    std::fs::write(&file, "id\n1\n2\n").unwrap();
    let args = serde_json::json!({
        "skill": "csv-insights",
        "command": "wc -l < $WORK_DIR/inputs/orders.csv",
    })
    .to_string();
    let mut replies = run_replies();
    let call = replies.remove(1);
    let call = call.replace(
        &serde_json::to_string(
            r#"{"skill":"csv-insights","command":"python3 scripts/profile_csv.py assets/sample-orders.csv"}"#,
        )
        .unwrap(),
        &serde_json::to_string(&args).unwrap(),
    );
    replies.insert(1, call);
    let server = serve(replies);
    let out = skills(
        &[
            "agent",
            "--run",
            "local",
            "--attach",
            file.to_str().unwrap(),
            "--model",
            "openai:test-model",
            "--prompt",
            "Count the orders.",
            &examples(),
        ],
        &[
            ("OPENAI_API_KEY", "sk-test"),
            ("OPENAI_BASE_URL", &server.url),
        ],
        None,
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let bodies = server.bodies.lock().unwrap();
    assert!(
        bodies[0].contains(
            r#"{"type":"text","text":"[attached file \"orders.csv\" (text/csv, 7 bytes)]\nid\n1\n2\n"}"#
        ),
        "{}",
        bodies[0]
    );
    assert!(
        bodies[2].contains(r#"\"stdout\": \"3\\n\""#),
        "{}",
        bodies[2]
    );
    assert!(
        bodies[2].contains("work/inputs/orders.csv"),
        "{}",
        bodies[2]
    );
    drop(bodies);

    for (extra, needle) in [
        (
            vec!["--attach", "/nonexistent/x.csv"],
            "--attach /nonexistent/x.csv",
        ),
        (
            vec!["--save-artifacts"],
            "add --run local, --run sandbox or --run container",
        ),
    ] {
        let root = examples();
        let mut argv = vec!["agent", "--model", "openai:test-model", "--prompt", "hi"];
        argv.extend(extra);
        argv.push(&root);
        let out = skills(&argv, &[("OPENAI_API_KEY", "sk-test")], None);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains(needle), "{}", text(&out.stderr));
    }
}

/// `skills agent` run in `cwd` with a config folder of its own; returns the
/// output and the request bodies.
fn agent_in(cwd: &std::path::Path, flags: &[&str], replies: Vec<String>) -> (Output, Vec<String>) {
    let server = serve(replies);
    let examples = examples();
    let mut args = vec!["agent", "--model", "openai:m", "--prompt", "Write it."];
    args.extend_from_slice(flags);
    args.push(&examples);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skills"));
    cmd.args(&args)
        .current_dir(cwd)
        .env_remove("SKILLS_ROOT")
        .env_remove("SKILLS_CONFIG")
        .env_remove("RUST_LOG")
        .env("XDG_CONFIG_HOME", cwd.join("no-user-config"))
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_BASE_URL", &server.url)
        .stdin(Stdio::null());
    let out = cmd.output().unwrap();
    let bodies = server.bodies.lock().unwrap().clone();
    (out, bodies)
}

#[test]
fn preload_loads_the_skill_before_the_first_model_call() {
    let dir = tempfile::tempdir().unwrap();
    let (out, bodies) = agent_in(
        dir.path(),
        &["--preload", "commit-message"],
        vec![openai_text_reply("Done.")],
    );
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("[skill] loaded commit-message"), "{stderr}");
    assert_eq!(bodies.len(), 1);
    let body: serde_json::Value = serde_json::from_str(&bodies[0]).unwrap();
    let messages = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool"], "{body}");
    let call = &messages[2]["tool_calls"][0];
    assert_eq!(call["function"]["name"], "load_skill");
    assert_eq!(
        call["function"]["arguments"],
        "{\"name\":\"commit-message\"}"
    );
    assert_eq!(messages[3]["tool_call_id"], call["id"]);
    assert!(
        messages[3]["content"]
            .as_str()
            .unwrap()
            .contains("Conventional\n   Commits"),
        "{}",
        messages[3]["content"]
    );

    // The config's `preloaded` tier does the same; an unknown name stops the
    // run before any request.
    std::fs::write(
        dir.path().join("skills.toml"),
        "[skills.release-notes]\ntier = \"preloaded\"\n",
    )
    .unwrap();
    let (out, bodies) = agent_in(dir.path(), &[], vec![openai_text_reply("Done.")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        bodies[0].contains("{\\\"name\\\":\\\"release-notes\\\"}"),
        "{}",
        bodies[0]
    );
    let (out, bodies) = agent_in(
        dir.path(),
        &["--preload", "no-such-skill"],
        vec![openai_text_reply("Done.")],
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("unknown: `no-such-skill`"),
        "{}",
        text(&out.stderr)
    );
    assert!(bodies.is_empty(), "no model call: {bodies:?}");
}
