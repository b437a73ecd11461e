//! `skills mcp` with a real MCP client: the official Python SDK (PyPI `mcp`)
//! runs `tests/mcp_clients/skills_client.py` against the built binary over
//! stdio and over Streamable HTTP (with a bearer token), on the legacy
//! handshake and on protocol 2026-07-28.
//!
//! Environment: `SKILLS_MCP_PYTHON`, the Python that has `mcp` installed
//! (default: `<workspace>/target/mcp-client-venv/bin/python`). Without it
//! the client tests fail, saying how to install it
//! (`bash .ci/install-mcp-client`; `bash .ci/test` does it for you).

#![allow(clippy::unwrap_used)]

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::Value;

const PNG: &[u8] =
    b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python with the MCP SDK. Panics, with the command that installs it,
/// when it is missing: a client test that cannot run its client fails.
fn client_python() -> PathBuf {
    let python = std::env::var_os("SKILLS_MCP_PYTHON")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target/mcp-client-venv/bin/python"));
    assert!(
        python.exists(),
        "no Python with the MCP SDK at {}: run `bash .ci/install-mcp-client` (creates \
         target/mcp-client-venv) or point SKILLS_MCP_PYTHON at a Python with mcp==2.3.0",
        python.display()
    );
    python
}

fn client_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_clients/skills_client.py")
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// Two skills, one with a reference, a script and a binary image.
fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        &root.join("charts/SKILL.md"),
        b"---\nname: charts\ndescription: Draws charts from CSV files. Use for plots.\n---\n# Charts\n\nSee references/styles.md.\n",
    );
    write(
        &root.join("charts/references/styles.md"),
        b"# Styles\nbar, line\n",
    );
    write(
        &root.join("charts/scripts/plot.sh"),
        b"#!/bin/sh\necho plotted\n",
    );
    write(&root.join("charts/assets/sample.png"), PNG);
    write(
        &root.join("notes/SKILL.md"),
        b"---\nname: notes\ndescription: Writes meeting notes.\n---\nWrite the notes.\n",
    );
    dir
}

/// Runs the client script and returns its JSON summary.
fn run_client(args: &[&str]) -> Value {
    let output = Command::new(client_python())
        .arg(client_script())
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the MCP client failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    serde_json::from_str(stdout.lines().last().unwrap()).unwrap()
}

fn check_summary(summary: &Value, protocol: &str) {
    assert_eq!(summary["protocol"], protocol, "{summary}");
    assert_eq!(summary["skills"], serde_json::json!(["charts", "notes"]));
    // Every file of every skill read and its digest checked; the image as a blob.
    assert_eq!(summary["files_checked"], 5, "{summary}");
    assert_eq!(summary["blobs"], 1, "{summary}");
    assert_eq!(summary["unknown_skill_code"], -32602);
    assert_eq!(summary["load_unknown_is_error"], true);
    assert_eq!(summary["read_skill_file_is_error"], false);
    // SEP-2549 cache hints only on 2026-07-28.
    assert_eq!(
        summary["cache_hints"],
        protocol == "2026-07-28",
        "{summary}"
    );
    assert!(summary["instructions_bytes"].as_u64().unwrap() > 0);
}

fn skills() -> &'static str {
    env!("CARGO_BIN_EXE_skills")
}

#[test]
fn python_client_over_stdio_legacy_handshake() {
    let dir = fixture();
    let root = dir.path().to_str().unwrap();
    let summary = run_client(&["stdio", "legacy", skills(), root]);
    check_summary(&summary, "2025-11-25");
    assert_eq!(
        summary["tools"],
        serde_json::json!(["load_skill", "read_skill_file"])
    );
}

#[test]
fn python_client_over_stdio_2026_07_28() {
    let dir = fixture();
    let root = dir.path().to_str().unwrap();
    let summary = run_client(&["stdio", "auto", skills(), root]);
    check_summary(&summary, "2026-07-28");
}

#[test]
fn python_client_calls_the_run_tools() {
    let dir = fixture();
    let root = dir.path().to_str().unwrap();
    let summary = run_client(&["stdio", "legacy", skills(), root, "--run", "local"]);
    check_summary(&summary, "2025-11-25");
    let tools = summary["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t == "run_skill_command"), "{summary}");
    assert_eq!(summary["run_is_error"], false, "{summary}");
    assert_eq!(summary["run_output_seen"], true, "{summary}");
}

/// `skills mcp --http 127.0.0.1:0` with a token; killed on drop.
struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    fn start(root: &Path, token: &str) -> Self {
        let mut child = Command::new(skills())
            .args(["mcp", "--http", "127.0.0.1:0"])
            .arg(root)
            .env("SKILLS_MCP_TOKEN", token)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .to_owned();
        Self { child, url }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn python_client_over_http_both_protocols() {
    let dir = fixture();
    let server = HttpServer::start(dir.path(), "t0ken");
    let summary = run_client(&["http", "auto", &server.url, "t0ken"]);
    check_summary(&summary, "2026-07-28");
    let summary = run_client(&["http", "legacy", &server.url, "t0ken"]);
    check_summary(&summary, "2025-11-25");
}

#[test]
fn python_client_with_a_wrong_token_is_refused() {
    let dir = fixture();
    let server = HttpServer::start(dir.path(), "t0ken");
    let output = Command::new(client_python())
        .arg(client_script())
        .args(["http", "legacy", &server.url, "wrong"])
        .output()
        .unwrap();
    // The SDK reports only "Server returned an error response".
    assert!(!output.status.success());
    // The status itself, on a raw request.
    let status = |auth: &str| {
        use std::io::{Read as _, Write as _};
        let addr = server
            .url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp");
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        write!(
            stream,
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Content-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut response = String::new();
        let _ = stream.read_to_string(&mut response);
        response.lines().next().unwrap_or_default().to_owned()
    };
    assert!(status("").contains(" 401 "));
    assert!(status("Authorization: Bearer wrong\r\n").contains(" 401 "));
    assert!(!status("Authorization: Bearer t0ken\r\n").contains(" 401 "));
}

#[test]
fn a_public_address_without_a_token_is_refused() {
    let dir = fixture();
    let output = Command::new(skills())
        .args(["mcp", "--http", "0.0.0.0:0"])
        .arg(dir.path())
        .env_remove("SKILLS_MCP_TOKEN")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("SKILLS_MCP_TOKEN"), "{stderr}");
}

#[test]
fn stdio_ends_cleanly_when_the_client_hangs_up() {
    let dir = fixture();
    let mut child = Command::new(skills())
        .arg("mcp")
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    {
        use std::io::Write as _;
        let mut stdin = child.stdin.take().unwrap();
        writeln!(
            stdin,
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
        )
        .unwrap();
        writeln!(stdin, "{{broken").unwrap();
    }
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    let stdout = String::from_utf8(output.stdout).unwrap();
    let answers: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    // Answers are matched by id, in whatever order they come.
    let init = answers
        .iter()
        .find(|a| a["id"] == 1)
        .expect("initialize answered");
    assert_eq!(init["result"]["serverInfo"]["name"], "skills");
    // The broken line got a parse error.
    assert!(
        answers
            .iter()
            .any(|a| a["id"].is_null() && a["error"]["code"] == -32700),
        "{stdout}"
    );
}
