//! What the real-client tests of `skills mcp` share (`tests/mcp.rs`, the
//! official Python SDK; `tests/inspector.rs`, MCP Inspector's CLI): the
//! built binary, the skill trees they serve, and an HTTP server process.
//!
//! Both are modules of the one test binary (`tests.rs`); each uses part of it.
#![allow(dead_code, clippy::unwrap_used)]

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};

use skills_testkit::fixture::{Library, SkillDir};

/// A 1×1 PNG: a binary file, served as a base64 blob.
pub(crate) const PNG: &[u8] =
    b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";

pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The path in the environment variable `var` when it is set and not
/// empty, else `default`.
pub(crate) fn env_path(var: &str, default: PathBuf) -> PathBuf {
    std::env::var_os(var)
        .filter(|p| !p.is_empty())
        .map_or(default, PathBuf::from)
}

/// The Python with the MCP SDK. Panics, with the command that installs it,
/// when it is missing: a client test that cannot run its client fails.
pub(crate) fn client_python() -> PathBuf {
    let python = env_path(
        "SKILLS_MCP_PYTHON",
        workspace_root().join("target/mcp-client-venv/bin/python"),
    );
    assert!(
        python.exists(),
        "no Python with the MCP SDK at {}: run `bash .ci/install-mcp-client` (creates \
         target/mcp-client-venv) or point SKILLS_MCP_PYTHON at a Python with mcp==2.3.0",
        python.display()
    );
    python
}

/// The `skills` binary under test.
pub(crate) fn skills() -> &'static str {
    env!("CARGO_BIN_EXE_skills")
}

/// `notes`, a skill with only a `SKILL.md`, in both fixtures.
fn notes() -> SkillDir {
    SkillDir::new("notes", "Writes meeting notes.").body("Write the notes.\n")
}

/// Two skills, one with a reference, a script and a binary image.
pub(crate) fn fixture() -> tempfile::TempDir {
    Library::new()
        .skill(
            SkillDir::new("charts", "Draws charts from CSV files. Use for plots.")
                .body("# Charts\n\nSee references/styles.md.\n")
                .file("references/styles.md", "# Styles\nbar, line\n")
                .file("scripts/plot.sh", "#!/bin/sh\necho plotted\n")
                .file("assets/sample.png", PNG),
        )
        .skill(notes())
        .write_temp()
        .unwrap()
}

/// A multi-segment skill with a skill nested in it, and a flat one:
///
/// ```text
/// acme/billing/SKILL.md                    billing
/// acme/billing/references/rates.md
/// acme/billing/refunds/SKILL.md            refunds, nested in billing
/// acme/billing/refunds/scripts/refund.sh
/// acme/billing/refunds/assets/stamp.png
/// notes/SKILL.md                           notes
/// ```
///
/// Served as rmcp's folder catalog serves it (the oracle test in
/// `crates/skills-mcp/tests/it/paths.rs`): the URIs in [`NESTED_URIS`], the
/// nested skill's files also in the manifest of `billing`.
pub(crate) fn nested_fixture() -> tempfile::TempDir {
    Library::new()
        .skill(
            SkillDir::new("billing", "Bills customers. Use for invoices.")
                .in_folder("acme/billing")
                .frontmatter_line("license: MIT")
                .frontmatter_line("metadata:")
                .frontmatter_line("  team: money")
                .body("# Billing\n\nSee references/rates.md.\n")
                .file("references/rates.md", "# Rates\n"),
        )
        .skill(
            SkillDir::new("refunds", "Refunds payments. Use for refunds.")
                .in_folder("acme/billing/refunds")
                .frontmatter_line("allowed-tools: Read Grep")
                .body("# Refunds\n")
                .file("scripts/refund.sh", "#!/bin/sh\necho refunded\n")
                .file("assets/stamp.png", PNG),
        )
        .skill(notes())
        .write_temp()
        .unwrap()
}

/// The `SKILL.md` URIs of [`nested_fixture`], in listing order.
pub(crate) const NESTED_URIS: [&str; 3] = [
    "skill://acme/billing/SKILL.md",
    "skill://acme/billing/refunds/SKILL.md",
    "skill://notes/SKILL.md",
];

/// Adds to `root` a skill whose name is over 64 characters (lenient loading
/// loads it; MCP forbids it) and returns its name.
pub(crate) fn add_unlistable_skill(root: &Path) -> String {
    let long = "a".repeat(70);
    SkillDir::new(&long, "A name too long for MCP.")
        .body("Long.\n")
        .write_in(root)
        .unwrap();
    long
}

/// The status line of the answer to a raw `ping` POSTed to `url`
/// (`http://HOST:PORT/mcp`) with the header lines `auth` (empty, or
/// `Authorization: Bearer …\r\n`): `HTTP/1.1 401 Unauthorized` and the like.
pub(crate) fn ping_status(url: &str, auth: &str) -> String {
    use std::io::{Read as _, Write as _};
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp");
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
}

/// `skills mcp --http 127.0.0.1:0` (with a token when given); killed on drop.
pub(crate) struct HttpServer {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`, as the server printed it.
    pub(crate) url: String,
    /// What the server wrote on standard error, read by a thread.
    stderr: Arc<Mutex<String>>,
}

impl HttpServer {
    pub(crate) fn start(root: &Path, token: Option<&str>) -> Self {
        let mut command = Command::new(skills());
        command
            .args(["mcp", "--http", "127.0.0.1:0"])
            .arg(root)
            .env_remove("SKILLS_MCP_TOKEN");
        if let Some(token) = token {
            command.env("SKILLS_MCP_TOKEN", token);
        }
        Self::spawn(command)
    }

    /// Spawns `command`, a `skills mcp --http …`, and waits for the line
    /// that names its URL (`skills mcp: listening on http://…/mcp`); the
    /// rest of its standard error is kept for [`HttpServer::stderr`].
    pub(crate) fn spawn(mut command: Command) -> Self {
        command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut seen = String::new();
        let url = loop {
            let mut line = String::new();
            if stderr.read_line(&mut line).unwrap() == 0 {
                let status = child.wait().unwrap();
                panic!("`{command:?}` ended ({status}) before listening:\n{seen}");
            }
            seen.push_str(&line);
            if line.contains("listening on") {
                break line
                    .split_whitespace()
                    .find(|w| w.starts_with("http://"))
                    .unwrap_or_else(|| panic!("no URL in {line:?}"))
                    .to_owned();
            }
        };
        let kept = Arc::new(Mutex::new(seen));
        let sink = Arc::clone(&kept);
        std::thread::spawn(move || {
            for line in stderr.lines() {
                let Ok(line) = line else { return };
                let mut text = sink.lock().unwrap_or_else(PoisonError::into_inner);
                text.push_str(&line);
                text.push('\n');
            }
        });
        Self {
            child,
            url,
            stderr: kept,
        }
    }

    /// Everything the server wrote on standard error so far.
    pub(crate) fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
