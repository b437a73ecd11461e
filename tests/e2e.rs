//! A skills folder on disk, read by the `skills-fs` provider, given to an
//! agent loop driven by a scripted model, whose run tool executes the skill's
//! script in the bubblewrap sandbox and collects the file it writes.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;
use skills_agent::{
    Agent, ModelResponse, Profile, Runner, ScriptedModel, Surface, ToolCall, WorkspaceTools,
};
use skills_core::{SkillProvider, WorkspaceRuntime};
use skills_exec::SandboxRuntime;
use skills_fs::{FsOptions, FsProvider};

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
    let skill = root.join("weekly-report");
    std::fs::create_dir_all(skill.join("scripts")).expect("mkdir");
    std::fs::create_dir_all(skill.join("assets")).expect("mkdir");
    std::fs::write(skill.join("SKILL.md"), SKILL_MD).expect("write");
    std::fs::write(skill.join("scripts/report.sh"), SCRIPT).expect("write");
    std::fs::write(
        skill.join("assets/logo.png"),
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
    )
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
    let provider = Arc::new(FsProvider::open([&skills], FsOptions::default()).await);
    let catalog = provider.list().await.expect("list");
    assert_eq!(catalog.names().collect::<Vec<_>>(), ["weekly-report"]);

    let workspaces = dir.path().join("workspaces");
    let runtime: Arc<dyn WorkspaceRuntime> = Arc::new(
        SandboxRuntime::builder(&workspaces)
            .build_sandbox()
            .expect("bubblewrap at /usr/bin/bwrap (bash .ci/run installs it)"),
    );
    let surface = Surface::default();
    let agent = Agent::builder("e2e", provider)
        .surface(surface.clone())
        .profile(Profile::Full)
        .executor(Arc::new(WorkspaceTools::new(
            Arc::clone(&runtime),
            &surface,
        )))
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
}
