//! Shared by the test binary (`tests.rs`) and `signals.rs`, which includes
//! it with `#[path]`: a fake
//! OpenAI-compatible model server on 127.0.0.1 and a child process watched
//! by a hang detector.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::io::{BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

/// A fake OpenAI chat-completions server: request `i` gets `reply(i)` after
/// `delay(i)`. Each connection is served on its own thread, so a reply held
/// back never blocks the next connection.
pub struct FakeModel {
    /// `http://127.0.0.1:PORT`, for `OPENAI_BASE_URL`.
    pub url: String,
    requests: Arc<AtomicUsize>,
    arrived: mpsc::Receiver<usize>,
}

impl FakeModel {
    /// Serves `reply(i)` to request `i` (0-based) after `delay(i)`.
    pub fn start(
        reply: impl Fn(usize) -> String + Send + Sync + 'static,
        delay: impl Fn(usize) -> Duration + Send + Sync + 'static,
    ) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let url = format!("http://{}", listener.local_addr().expect("local addr"));
        let requests = Arc::new(AtomicUsize::new(0));
        let (tx, arrived) = mpsc::channel();
        let counter = Arc::clone(&requests);
        let handlers = Arc::new((reply, delay));
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let counter = Arc::clone(&counter);
                let handlers = Arc::clone(&handlers);
                let tx = tx.clone();
                thread::spawn(move || {
                    let mut reader = BufReader::new(stream);
                    let Some(_body) = read_request_body(&mut reader) else {
                        return;
                    };
                    let i = counter.fetch_add(1, Ordering::SeqCst);
                    let _ = tx.send(i);
                    let (reply, delay) = &*handlers;
                    thread::sleep(delay(i));
                    let body = reply(i);
                    let mut stream = reader.into_inner();
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                });
            }
        });
        Self {
            url,
            requests,
            arrived,
        }
    }

    /// Every request answered at once with [`answer`]`("done")`.
    pub fn answering() -> Self {
        Self::start(|_| answer("done"), |_| Duration::ZERO)
    }

    /// Requests received so far.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// Waits until request `i` (0-based) has arrived; panics after `within`.
    pub fn wait_for_request(&self, i: usize, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.arrived.recv_timeout(left) {
                Ok(n) if n >= i => return,
                Ok(_) => {}
                Err(_) => panic!("request {i} never reached the fake model within {within:?}"),
            }
        }
    }
}

/// An SSE body of these `data:` events.
/// Reads one HTTP/1.1 request's headers and body (by `content-length`) from
/// `reader`; `None` when the client went away first.
pub fn read_request_body<R: std::io::BufRead>(reader: &mut R) -> Option<Vec<u8>> {
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return None;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(value) = lower.strip_prefix("content-length:") {
            length = value.trim().parse().unwrap_or(0);
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

/// Debian's chromium, which CI installs (`.ci/run`).
pub const CHROMIUM: &str = "/usr/bin/chromium";

/// The DOM headless chromium makes of the page at `page`. A missing browser
/// fails the test with what to install: it never passes unchecked.
pub fn dump_dom(page: &std::path::Path) -> String {
    assert!(
        std::path::Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: install Debian's chromium (`apt-get install -y chromium`; .ci/run does)"
    );
    let profile = tempfile::tempdir().expect("profile");
    let output = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    assert!(
        output.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("DOM is UTF-8")
}

pub fn sse(events: &[&str]) -> String {
    events.iter().map(|e| format!("data: {e}\n\n")).collect()
}

/// A streamed final answer `text` (no tool calls).
pub fn answer(text: &str) -> String {
    let text = serde_json::to_string(text).expect("a string serializes");
    sse(&[
        &format!(
            r#"{{"id":"r","model":"m","choices":[{{"index":0,"delta":{{"role":"assistant","content":{text}}},"finish_reason":null}}]}}"#
        ),
        r#"{"id":"r","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        r#"{"id":"r","model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":1}}"#,
        "[DONE]",
    ])
}

/// A streamed answer that calls the tool `name` with `arguments` (JSON).
pub fn tool_call(name: &str, arguments: &str) -> String {
    let arguments = serde_json::to_string(arguments).expect("a string serializes");
    sse(&[
        &format!(
            r#"{{"id":"r","model":"m","choices":[{{"index":0,"delta":{{"role":"assistant","tool_calls":[{{"index":0,"id":"call_1","type":"function","function":{{"name":"{name}","arguments":{arguments}}}}}]}},"finish_reason":null}}]}}"#
        ),
        r#"{"id":"r","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        r#"{"id":"r","model":"m","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":1}}"#,
        "[DONE]",
    ])
}

/// A streamed answer that calls `load_skill` for `skill`.
pub fn load_skill_call(skill: &str) -> String {
    tool_call("load_skill", &format!(r#"{{"name":"{skill}"}}"#))
}

/// The `skills` binary with a clean environment: no skill roots, keys or
/// log filter from the caller's.
pub fn skills() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skills"));
    for var in [
        "SKILLS_ROOT",
        "RUST_LOG",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "SKILLS_RUN_ALLOWED_COMMANDS",
        "SKILLS_RUN_DENIED_COMMANDS",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// What a watched child left.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// A running child whose output is drained on threads (a chatty child never
/// blocks on a full pipe).
pub struct Watched {
    child: Child,
    stdout: thread::JoinHandle<Vec<u8>>,
    stderr: thread::JoinHandle<Vec<u8>>,
    label: String,
}

impl Watched {
    /// Starts `cmd` with piped stdout and stderr, writes `stdin` (then closes
    /// it; `None` closes it at once).
    pub fn spawn(cmd: &mut Command, label: &str, stdin: Option<&[u8]>) -> Self {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("{label}: cannot start: {e}"));
        let mut input = child.stdin.take().expect("piped stdin");
        if let Some(bytes) = stdin {
            input.write_all(bytes).expect("write stdin");
        }
        drop(input);
        let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
            thread::spawn(move || {
                let mut all = Vec::new();
                let _ = pipe.read_to_end(&mut all);
                all
            })
        };
        let stdout = drain(Box::new(child.stdout.take().expect("piped stdout")));
        let stderr = drain(Box::new(child.stderr.take().expect("piped stderr")));
        Self {
            child,
            stdout,
            stderr,
            label: label.to_owned(),
        }
    }

    /// The child's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the child to exit. A hang detector, not a timing check:
    /// after `bound` the child is killed and the test fails with "hung".
    pub fn finish(mut self, bound: Duration) -> Finished {
        let deadline = Instant::now() + bound;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(20)),
                Ok(None) => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    let stderr = self.stderr.join().unwrap_or_default();
                    let tail = String::from_utf8_lossy(&stderr);
                    let tail: String = tail
                        .chars()
                        .rev()
                        .take(2000)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect();
                    panic!(
                        "{}: hung (still running after {bound:?}; killed). End of stderr:\n{tail}",
                        self.label
                    );
                }
                Err(e) => panic!("{}: cannot wait: {e}", self.label),
            }
        };
        let text = |h: thread::JoinHandle<Vec<u8>>| {
            String::from_utf8_lossy(&h.join().unwrap_or_default()).into_owned()
        };
        Finished {
            status,
            stdout: text(self.stdout),
            stderr: text(self.stderr),
        }
    }
}

/// Sends `signal` (`TERM`, `INT`) to process `pid` with the shell's `kill`.
pub fn send_signal(pid: u32, signal: &str) {
    let status = Command::new("bash")
        .args(["-c", &format!("kill -{signal} {pid}")])
        .status()
        .expect("run bash");
    assert!(status.success(), "kill -{signal} {pid} failed");
}

/// `DOCKER_HOST` and `SKILLS_CONTAINER_IMAGE` for a `skills` process that
/// runs commands with the container runtime: from
/// `SKILLS_TEST_CONTAINER_HOST` and `SKILLS_TEST_CONTAINER_IMAGE` (set by
/// `bash .ci/test`, which starts a Podman service); fails the test, saying
/// how to start one, without them.
pub fn container_env() -> Vec<(&'static str, String)> {
    let host = std::env::var("SKILLS_TEST_CONTAINER_HOST").unwrap_or_else(|_| {
        panic!(
            "SKILLS_TEST_CONTAINER_HOST is not set: start a Podman service with \
             `bash .ci/podman start` and set it to the DOCKER_HOST it prints \
             (`bash .ci/test` does both itself)"
        )
    });
    let image = std::env::var("SKILLS_TEST_CONTAINER_IMAGE")
        .unwrap_or_else(|_| "localhost/skills-runner:latest".to_owned());
    vec![("DOCKER_HOST", host), ("SKILLS_CONTAINER_IMAGE", image)]
}
