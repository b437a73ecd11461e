//! Runs a skill's bundled script the way an agent's `run_skill_command` tool
//! does: stage the skill into a per-session workspace, run the command in the
//! bubblewrap sandbox (or locally with `--local`), collect the file it wrote
//! to `out/`, clean up.
//!
//! ```text
//! cargo run -p run-script -- [--local] [SKILLS_DIR]
//! ```
//!
//! It profiles the sample CSV shipped with the bundled `csv-insights` skill
//! with that skill's own `scripts/profile_csv.py` (Python 3 from the system;
//! the sandbox hides the home folder, so a Python under `~` is not seen).
//!
//! What it must not depend on: anything beyond the public APIs of
//! `skills-core`, `skills-fs`, `skills-exec` and `skills-sandbox` (it is what
//! a user would write).

use std::process::ExitCode;
use std::sync::Arc;

use skills_core::SkillProvider;
use skills_exec::{LocalRuntime, SandboxRuntime};
use skills_fs::{FsOptions, FsProvider};
use skills_workspace::{RunRequest, SessionId, SkillSource, WorkspaceRuntime};

type Error = Box<dyn std::error::Error + Send + Sync>;

const SKILL: &str = "csv-insights";
const COMMAND: &str = "python3 scripts/profile_csv.py assets/sample-orders.csv --format markdown \
                       > $OUTPUT_DIR/profile.md";

fn main() -> ExitCode {
    // The sandbox's helper is this very program: when bubblewrap starts it
    // as the helper, this runs the helper and exits. First thing, before
    // any thread starts.
    skills_sandbox::run_if_helper();
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(cli()),
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(2)
        }
    }
}

async fn cli() -> ExitCode {
    let mut local = false;
    let mut dir = "examples/skills".to_owned();
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--local" => local = true,
            "-h" | "--help" => {
                println!("usage: run-script [--local] [SKILLS_DIR]");
                return ExitCode::SUCCESS;
            }
            _ => dir = arg,
        }
    }
    match run(&dir, local).await {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(2)
        }
    }
}

async fn run(dir: &str, local: bool) -> Result<ExitCode, Error> {
    let provider = FsProvider::open([dir], FsOptions::default()).await;
    let skill = provider.get(SKILL).await?;
    let source = SkillSource::from_skill_location(&skill)
        .ok_or_else(|| format!("skill `{SKILL}` has no folder on disk"))?;

    // Each session gets its own workspace under this root.
    let root = skills_exec::private_root("run-script");
    let runtime: Arc<dyn WorkspaceRuntime> = if local {
        Arc::new(LocalRuntime::builder(&root).build()?)
    } else {
        // Fails with a clear message when bubblewrap is missing or user
        // namespaces are off; `--local` runs without the sandbox.
        Arc::new(SandboxRuntime::builder(&root).build_sandbox()?)
    };
    let session: &SessionId = &"example".parse()?;
    let result = async {
        runtime.stage_skill(session, &source).await?;
        let request = RunRequest::new(SKILL, COMMAND)
            .timeout_secs(30)
            .output_file("out/*.md");
        Ok::<_, Error>(runtime.run(session, &request).await?)
    }
    .await;
    // Removes the workspace (and nothing outside the root).
    runtime.cleanup(session).await?;
    std::fs::remove_dir(&root)?;
    let result = result?;

    let how = if local { "locally" } else { "in the sandbox" };
    println!(
        "ran `{COMMAND}` {how}: exit {:?} in {} ms",
        result.exit_code, result.duration_ms
    );
    if !result.stderr.is_empty() {
        eprintln!("{}", result.stderr);
    }
    for file in &result.output_files {
        println!(
            "\n{} ({}, {} bytes):\n",
            file.name, file.mime_type, file.size_bytes
        );
        if let Some(content) = &file.content {
            println!("{content}");
        }
    }
    Ok(if result.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
