//! `skills mcp` checked by a third-party client: MCP Inspector's CLI (npm
//! `@modelcontextprotocol/inspector`, pinned in `.ci/inspector/`), against
//! the built binary over stdio and over Streamable HTTP, on the legacy
//! `initialize` handshake and on protocol 2026-07-28 (`--protocol-era
//! legacy` / `modern`).
//!
//! On a tree with a multi-segment skill and a skill nested in it, each run
//! checks the negotiated protocol version, lists the tools with their
//! annotations, calls `load_skill`, reads a text and a binary resource and a
//! folder, and runs the Inspector's own SEP-2640 conformance check over the
//! whole listing: `skills/list --verify --require-digests` (every entry's
//! name, description, URI and manifest rules, each listed `SKILL.md`'s
//! frontmatter against the listing, every file's size and `sha256` digest
//! against the bytes `resources/read` serves; exit 7 on a violation, 8 when
//! it could not check everything, 9 for a skill without digests).
//!
//! Environment: `SKILLS_MCP_INSPECTOR`, the `mcp-inspector` launcher
//! (default: `<workspace>/target/mcp-inspector/node_modules/.bin/mcp-inspector`,
//! where `bash .ci/install-inspector` puts it; `bash .ci/test` does that).
//! Without it these tests fail, saying how to install it.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::mcp_support::{HttpServer, NESTED_URIS, nested_fixture, skills, workspace_root};
use serde_json::Value;

/// The Inspector's launcher. Panics, with the command that installs it,
/// when it is missing: a client test that cannot run its client fails.
fn inspector() -> PathBuf {
    let path = std::env::var_os("SKILLS_MCP_INSPECTOR")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            workspace_root().join("target/mcp-inspector/node_modules/.bin/mcp-inspector")
        });
    assert!(
        path.exists(),
        "no MCP Inspector at {}: run `bash .ci/install-inspector` (installs the pinned \
         @modelcontextprotocol/inspector into target/mcp-inspector; needs Node.js 20+ and npm) \
         or point SKILLS_MCP_INSPECTOR at an `mcp-inspector` launcher",
        path.display()
    );
    path
}

/// Where the Inspector finds the server.
#[derive(Clone, Copy)]
enum Server<'a> {
    /// It starts `skills mcp [EXTRA…] ROOT` itself.
    Stdio(&'a Path, &'a [&'a str]),
    /// `skills mcp --http` at this URL, with this bearer token.
    Http(&'a str, &'a str),
}

/// The protocol eras of the Inspector and the version each must negotiate.
const ERAS: [(&str, &str); 2] = [("legacy", "2025-11-25"), ("modern", "2026-07-28")];

/// Runs `mcp-inspector --cli --format json --protocol-era ERA ARGS…`
/// against `server`, with a home folder of its own (the Inspector keeps its
/// state under `~/.mcp-inspector`).
fn run(server: Server<'_>, era: &str, args: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    let mut command = Command::new(inspector());
    command
        .args(["--cli", "--format", "json", "--protocol-era", era])
        .args(args)
        .env("HOME", home.path())
        .env_remove("MCP_CATALOG_PATH")
        .env_remove("MCP_CLIENT_CONFIG_PATH");
    match server {
        Server::Stdio(root, extra) => {
            command
                .arg("--")
                .arg(skills())
                .arg("mcp")
                .args(extra)
                .arg(root);
        }
        Server::Http(url, token) => {
            command.args([
                "--transport",
                "http",
                "--server-url",
                url,
                "--header",
                &format!("Authorization: Bearer {token}"),
            ]);
        }
    }
    command.output().unwrap()
}

/// [`run`], expecting success and one JSON document on standard output.
fn run_json(server: Server<'_>, era: &str, args: &[&str]) -> Value {
    let output = run(server, era, args);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "mcp-inspector {args:?} ({era}) failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|err| panic!("{err}: {stdout}"))
}

/// Everything one server is checked for, on one protocol era.
fn check(server: Server<'_>, era: &str, protocol: &str) {
    // The handshake: the negotiated version and the Skills extension.
    let init = run_json(server, era, &["--method", "initialize"]);
    let result = &init["result"];
    assert_eq!(result["protocolVersion"], protocol, "{init}");
    assert_eq!(result["serverInfo"]["name"], "skills", "{init}");
    assert_eq!(
        result["capabilities"]["extensions"]["io.modelcontextprotocol/skills"]["directoryRead"],
        true,
        "{init}"
    );

    // The tools, annotated: the read tools read-only, idempotent, closed-world.
    let tools = run_json(server, era, &["--method", "tools/list"]);
    let tools = tools["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(
        names.starts_with(&["load_skill", "read_skill_file"]),
        "{names:?}"
    );
    for tool in tools {
        let hints = &tool["annotations"];
        assert!(tool["title"].is_string(), "{tool}");
        let read_only = matches!(
            tool["name"].as_str(),
            Some("load_skill" | "read_skill_file")
        );
        assert_eq!(hints["readOnlyHint"], read_only, "{tool}");
        if read_only {
            assert_eq!(hints["idempotentHint"], true, "{tool}");
            assert_eq!(hints["openWorldHint"], false, "{tool}");
            assert_eq!(hints["destructiveHint"], false, "{tool}");
        }
    }
    let loaded = run_json(
        server,
        era,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "load_skill",
            "--tool-arg",
            "name=refunds",
        ],
    );
    assert_ne!(loaded["result"]["isError"], true, "{loaded}");
    assert!(loaded.to_string().contains("# Refunds"), "{loaded}");

    // Resources under multi-segment URIs: the nested skill's SKILL.md as
    // text, its image as a blob, the enclosing skill's folder.
    let read = run_json(
        server,
        era,
        &["--method", "resources/read", "--uri", NESTED_URIS[1]],
    );
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["uri"], NESTED_URIS[1], "{read}");
    assert!(
        contents["text"].as_str().unwrap().contains("name: refunds"),
        "{read}"
    );
    let image = "skill://acme/billing/refunds/assets/stamp.png";
    let read = run_json(server, era, &["--method", "resources/read", "--uri", image]);
    assert!(read["result"]["contents"][0]["blob"].is_string(), "{read}");
    let folder = run_json(
        server,
        era,
        &[
            "--method",
            "resources/directory/read",
            "--uri",
            "skill://acme/billing",
        ],
    );
    let children: Vec<&str> = folder["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        children,
        [
            "skill://acme/billing/SKILL.md",
            "skill://acme/billing/references",
            "skill://acme/billing/refunds",
        ],
        "{folder}"
    );

    // The Inspector's conformance and digest check over the whole listing.
    verify(server, era);
}

/// `skills/list --verify --require-digests`: one report per skill, each
/// verified, in the listing's order.
fn verify(server: Server<'_>, era: &str) {
    let output = run(
        server,
        era,
        &["--method", "skills/list", "--verify", "--require-digests"],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "--verify failed ({}; 7: nonconformant, 8: incomplete, 9: no digests):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let reports: Vec<Value> = stdout
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}")))
        .collect();
    let uris: Vec<&str> = reports.iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, NESTED_URIS, "{stdout}");
    for report in &reports {
        assert_eq!(report["ok"], true, "{report}");
        assert_eq!(report["outcome"], "verified", "{report}");
        assert_eq!(report["conformance"], serde_json::json!([]), "{report}");
        assert_eq!(report["frontmatter"], serde_json::json!([]), "{report}");
        for file in report["files"].as_array().unwrap() {
            assert_eq!(file["status"], "verified", "{report}");
        }
    }
    // billing's manifest has the nested skill's files too.
    assert_eq!(reports[0]["files"].as_array().unwrap().len(), 5, "{stdout}");
}

#[test]
fn inspector_over_stdio_both_protocols() {
    let dir = nested_fixture();
    for (era, protocol) in ERAS {
        check(Server::Stdio(dir.path(), &[]), era, protocol);
    }
}

#[test]
fn inspector_over_http_both_protocols() {
    let dir = nested_fixture();
    let server = HttpServer::start(dir.path(), Some("t0ken"));
    for (era, protocol) in ERAS {
        check(Server::Http(&server.url, "t0ken"), era, protocol);
    }
}

/// With `--run local` the run tools come on top, not read-only.
#[test]
fn inspector_sees_the_run_tools_as_not_read_only() {
    let dir = nested_fixture();
    let tools = run_json(
        Server::Stdio(dir.path(), &["--run", "local"]),
        "legacy",
        &["--method", "tools/list"],
    );
    let tools = tools["result"]["tools"].as_array().unwrap();
    let run = tools
        .iter()
        .find(|t| t["name"] == "run_skill_command")
        .unwrap_or_else(|| panic!("no run_skill_command in {tools:?}"));
    let hints = &run["annotations"];
    assert_eq!(hints["readOnlyHint"], false, "{run}");
    assert_eq!(hints["destructiveHint"], true, "{run}");
    assert_eq!(hints["openWorldHint"], true, "{run}");
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        if name.contains("session") || name == "run_skill_command" {
            assert_eq!(tool["annotations"]["readOnlyHint"], false, "{tool}");
        }
    }
}
