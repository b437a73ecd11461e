//! What the real-client tests of `skills mcp` share (`tests/mcp.rs`, the
//! official Python SDK; `tests/inspector.rs`, MCP Inspector's CLI): the
//! built binary, the skill trees they serve, and an HTTP server process.
//!
//! Both are modules of the one test binary (`tests.rs`); each uses part of it.
#![allow(dead_code, clippy::unwrap_used)]

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use skills_testkit::fixture::{Library, SkillDir};

/// A 1×1 PNG: a binary file, served as a base64 blob.
pub(crate) const PNG: &[u8] =
    b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0\x1f\x15\xc4\x89";

pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
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

/// `skills mcp --http 127.0.0.1:0` (with a token when given); killed on drop.
pub(crate) struct HttpServer {
    child: Child,
    /// `http://127.0.0.1:PORT/mcp`, as the server printed it.
    pub(crate) url: String,
}

impl HttpServer {
    pub(crate) fn start(root: &Path, token: Option<&str>) -> Self {
        let mut command = Command::new(skills());
        command
            .args(["mcp", "--http", "127.0.0.1:0"])
            .arg(root)
            .env_remove("SKILLS_MCP_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(token) = token {
            command.env("SKILLS_MCP_TOKEN", token);
        }
        let mut child = command.spawn().unwrap();
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
