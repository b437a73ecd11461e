//! `skills mcp` ends cleanly on SIGTERM and SIGINT, over both transports:
//! the real binary, a real request in flight (`run_skill_command` running
//! `sleep`), the signal sent with `kill`; the answer must arrive and the
//! exit status must be 0. Also: the run tools over HTTP need a token.

#![allow(clippy::unwrap_used)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skills_testkit::fixture::{Library, SkillDir};

/// How long the server may take to exit before the test fails as hung.
const EXIT_DEADLINE: Duration = Duration::from_secs(30);
const TOKEN: &str = "t0ken-for-tests";

fn skills() -> &'static str {
    env!("CARGO_BIN_EXE_skills")
}

fn fixture() -> tempfile::TempDir {
    Library::new()
        .skill(SkillDir::new("slow", "Takes its time. Use for shutdown tests.").body("Run it.\n"))
        .write_temp()
        .unwrap()
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success(), "kill -{name} failed");
}

fn wait(child: &mut Child) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > EXIT_DEADLINE {
            let _ = child.kill();
            panic!("skills mcp did not exit within {EXIT_DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn initialize() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    })
}

fn slow_call() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "run_skill_command", "arguments": {"skill": "slow", "command": "sleep 1 && echo finished"}}
    })
}

/// `skills mcp --http 127.0.0.1:0 …` with the token; the child and its port.
fn start_http(root: &Path, extra: &[&str]) -> (Child, u16) {
    let mut child = Command::new(skills())
        .args(["mcp", "--http", "127.0.0.1:0"])
        .args(extra)
        .arg(root)
        .env("SKILLS_MCP_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .trim_end_matches("/mcp")
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    (child, port)
}

/// Sends one POST (`Connection: close`) and returns the open stream.
fn post(port: u16, session: Option<&str>, body: &Value) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_read_timeout(Some(EXIT_DEADLINE)).unwrap();
    let body = body.to_string();
    let session = session
        .map(|s| format!("Mcp-Session-Id: {s}\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         {session}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    stream
}

fn read_all(mut stream: TcpStream) -> String {
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    text
}

fn open_session(port: u16) -> String {
    let reply = read_all(post(port, None, &initialize()));
    let session = reply
        .lines()
        .find_map(|l| {
            let (key, value) = l.split_once(':')?;
            key.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session in {reply}"));
    let done = read_all(post(
        port,
        Some(&session),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ));
    assert!(done.starts_with("HTTP/1.1 202"), "{done}");
    session
}

fn http_ends_cleanly_on(signal_name: &str) {
    let dir = fixture();
    let (mut child, port) = start_http(dir.path(), &["--run", "local"]);
    let session = open_session(port);
    let in_flight = post(port, Some(&session), &slow_call());
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, signal_name);
    let reply = read_all(in_flight);
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.contains("finished"), "the answer arrived: {reply}");
    let status = wait(&mut child);
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "no longer listening"
    );
}

#[test]
fn sigterm_ends_http_after_the_request_in_flight() {
    http_ends_cleanly_on("TERM");
}

#[test]
fn sigint_ends_http_after_the_request_in_flight() {
    http_ends_cleanly_on("INT");
}

fn stdio_ends_cleanly_on(signal_name: &str) {
    let dir = fixture();
    let mut child = Command::new(skills())
        .args(["mcp", "--run", "local"])
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    writeln!(stdin, "{}", initialize()).unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"id\":1"), "{line}");
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .unwrap();
    writeln!(stdin, "{}", slow_call()).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, signal_name);
    // Standard input stays open: the signal alone ends the session.
    let mut answer = String::new();
    stdout.read_line(&mut answer).unwrap();
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["id"], 2, "{answer}");
    assert!(answer.to_string().contains("finished"), "{answer}");
    let status = wait(&mut child);
    assert_eq!(status.code(), Some(0), "{status:?}");
    drop(stdin);
}

#[test]
fn sigterm_ends_stdio_after_the_request_in_flight() {
    stdio_ends_cleanly_on("TERM");
}

#[test]
fn sigint_ends_stdio_after_the_request_in_flight() {
    stdio_ends_cleanly_on("INT");
}

/// An idle HTTP server (no request, an open keep-alive connection) exits
/// at once with 0.
#[test]
fn sigterm_ends_an_idle_http_server() {
    let dir = fixture();
    let (mut child, port) = start_http(dir.path(), &[]);
    let _session = open_session(port);
    let _idle = TcpStream::connect(("127.0.0.1", port)).unwrap();
    signal(&child, "TERM");
    assert_eq!(wait(&mut child).code(), Some(0));
}

/// The run tools over HTTP need a token even on loopback: without one,
/// `skills mcp` refuses to start and names the variable.
#[test]
fn run_tools_over_http_need_a_token() {
    let dir = fixture();
    let output = Command::new(skills())
        .args(["mcp", "--http", "127.0.0.1:0", "--run", "local"])
        .arg(dir.path())
        .env_remove("SKILLS_MCP_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("SKILLS_MCP_TOKEN"), "{stderr}");
    assert!(stderr.contains("--run"), "{stderr}");
}

/// A malformed `--allow-origin` is a usage error, not an origin that never
/// matches.
#[test]
fn a_malformed_allowed_origin_is_refused() {
    let dir = fixture();
    let output = Command::new(skills())
        .args([
            "mcp",
            "--http",
            "127.0.0.1:0",
            "--allow-origin",
            "example.com",
        ])
        .arg(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("example.com"), "{stderr}");
}
