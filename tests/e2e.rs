//! A skills folder on disk, read by the `skills-fs` provider, given to an
//! agent loop driven by a scripted model, whose run tool executes the skill's
//! script in the bubblewrap sandbox and collects the file it writes; then the
//! same provider served by `skills-mcp` over Streamable HTTP to a real MCP
//! client (the official Python SDK), which lists, gets and reads the skills
//! and checks every file's digest.
//!
//! Environment: `SKILLS_MCP_PYTHON`, a Python with the `mcp` package (`bash
//! .ci/test` installs one with `bash .ci/install-mcp-client`); without it the
//! test fails saying so.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use serde_json::json;
use skills_agent::{Agent, ModelResponse, Profile, Runner, ScriptedModel, Surface, ToolCall};
use skills_core::SkillProvider;
use skills_exec::SandboxRuntime;
use skills_fs::{FsOptions, FsProvider};
use skills_mcp::{HttpOptions, HttpServer, SkillsServer};
use skills_testkit::fixture::SkillDir;
use skills_workspace::WorkspaceRuntime;

const SKILL_MD: &str = "---
name: weekly-report
description: Writes the weekly status report into out/report.txt. Use when asked for the weekly report.
---
Run `bash scripts/report.sh WEEK` and give the user `out/report.txt`.
";

const SCRIPT: &str = "#!/usr/bin/env bash
set -eu
printf 'status report for week %s\\nall green\\n' \"$1\" > \"$OUTPUT_DIR/report.txt\"
echo wrote report
";

/// The skills folder a user would have: one skill with a script and a
/// binary asset.
fn write_skills(root: &Path) {
    SkillDir::raw("weekly-report", SKILL_MD)
        .file("scripts/report.sh", SCRIPT)
        .file("assets/logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
        .write_in(root)
        .expect("write");
}

fn call(id: &str, name: &str, args: serde_json::Value) -> ModelResponse {
    ModelResponse::tool_calls("", vec![ToolCall::new(id, name, args)])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disk_to_provider_to_agent_loop_to_sandboxed_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let skills = dir.path().join("skills");
    write_skills(&skills);
    let provider: Arc<dyn SkillProvider> =
        Arc::new(FsProvider::open([&skills], FsOptions::default()).await);
    let catalog = provider.list().await.expect("list");
    assert_eq!(catalog.names().collect::<Vec<_>>(), ["weekly-report"]);

    let workspaces = dir.path().join("workspaces");
    let runtime: Arc<dyn WorkspaceRuntime> = Arc::new(
        SandboxRuntime::builder(&workspaces)
            .build_sandbox()
            .expect("bubblewrap at /usr/bin/bwrap (bash .ci/run installs it)"),
    );
    let surface = Surface::default();
    let agent = Agent::builder("e2e", Arc::clone(&provider))
        .surface(surface.clone())
        .profile(Profile::Full)
        .runtime(Arc::clone(&runtime))
        .build()
        .expect("agent");
    let mut session = agent.start_session().await.expect("session");

    let model = Arc::new(ScriptedModel::new([
        call("c1", "load_skill", json!({"name": "weekly-report"})),
        call(
            "c2",
            "run_skill_command",
            json!({
                "skill": "weekly-report",
                "command": "bash scripts/report.sh 47",
                "output_files": ["out/*.txt"],
            }),
        ),
        ModelResponse::text("The report is in out/report.txt."),
    ]));
    let runner = Runner::builder(model.clone()).build();
    let outcome = runner
        .run_to_end(&mut session, "Write the weekly report for week 47.")
        .await
        .expect("run");
    assert_eq!(outcome.text, "The report is in out/report.txt.");
    assert_eq!(outcome.steps, 3);
    // Every request extended the one before it, byte for byte.
    assert!(
        outcome
            .requests
            .iter()
            .skip(1)
            .all(|r| r.extends_previous == Some(true)),
        "{:?}",
        outcome.requests
    );

    // The last request carries the run's result as the tool result.
    let requests = model.requests();
    let last = requests.last().expect("three requests");
    let transcript = serde_json::to_string(&last.messages).expect("json");
    assert!(
        transcript.contains("Run `bash scripts/report.sh WEEK`"),
        "the body was loaded"
    );
    let run_result = session
        .transcript()
        .iter()
        .rev()
        .find(|m| m.tool_name.as_deref() == Some("run_skill_command"))
        .map(|m| m.content.as_str())
        .expect("a tool result with the script's output");
    let result: serde_json::Value = serde_json::from_str(run_result).expect("run result JSON");
    assert_eq!(result["exit_code"], 0, "{result}");
    let files = result["output_files"].as_array().expect("output_files");
    assert_eq!(files.len(), 1, "collected exactly once: {result}");
    assert_eq!(files[0]["name"], "out/report.txt");
    assert_eq!(
        files[0]["content"],
        "status report for week 47\nall green\n"
    );

    runtime.cleanup(session.id()).await.expect("cleanup");

    // The same skills, from the same provider, to a real MCP client.
    let python = mcp_python();
    let server = SkillsServer::builder(Arc::clone(&provider))
        .build()
        .await
        .expect("MCP server");
    let http = HttpServer::bind(
        server,
        HttpOptions::new("127.0.0.1:0".parse().expect("address")).token(Some("e2e".into())),
    )
    .await
    .expect("bind 127.0.0.1");
    let url = format!("http://{}/mcp", http.local_addr());
    let client = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../crates/skills-cli/tests/mcp_clients/skills_client.py");
    let out = tokio::task::spawn_blocking(move || {
        Command::new(python)
            .arg(client)
            .args(["http", "legacy", &url, "e2e"])
            .output()
    })
    .await
    .expect("join")
    .expect("run the Python client");
    http.shutdown().await;
    assert!(
        out.status.success(),
        "the MCP client failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).expect("summary JSON");
    assert_eq!(summary["skills"], json!(["weekly-report"]), "{summary}");
    // SKILL.md, the script and the PNG, each digest checked by the client;
    // the PNG came as a blob.
    assert_eq!(summary["files_checked"], 3, "{summary}");
    assert_eq!(summary["blobs"], 1, "{summary}");
    assert_eq!(summary["tools"], json!(["load_skill", "read_skill_file"]));
}

/// The Python with the MCP SDK, or a failure that says how to get one.
fn mcp_python() -> PathBuf {
    let python = std::env::var_os("SKILLS_MCP_PYTHON").map(PathBuf::from);
    match python {
        Some(p) if p.exists() => p,
        _ => panic!(
            "SKILLS_MCP_PYTHON is not set to a Python with the `mcp` package: run \
             `bash .ci/install-mcp-client` and set SKILLS_MCP_PYTHON to \
             target/mcp-client-venv/bin/python (`bash .ci/test` does both)"
        ),
    }
}
