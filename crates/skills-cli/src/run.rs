//! `skills run`: stage one skill into a throw-away workspace, run a command
//! in it (locally or in the bubblewrap sandbox), print its output and the
//! files it produced.

use std::io::Write;
use std::sync::Arc;

use skills_core::{RunRequest, RunResult, SkillProvider, SkillSource, WorkspaceRuntime};
use skills_exec::{LocalRuntime, SandboxRuntime};

/// What `skills run` was asked to do.
#[derive(Debug)]
pub(crate) struct RunArgs {
    pub(crate) name: String,
    pub(crate) command: Vec<String>,
    pub(crate) sandbox: bool,
    pub(crate) timeout: Option<u64>,
    pub(crate) output_files: Vec<String>,
    pub(crate) json: bool,
}

/// Why `skills run` could not run the command (exit code 2).
#[derive(Debug)]
pub(crate) struct RunFailure(pub(crate) String);

/// Exit code when the command timed out (as `timeout(1)` does).
pub(crate) const TIMED_OUT: u8 = 124;

/// Runs the command; returns the exit code to end with: the command's own
/// code, 124 on timeout, 125 when it was killed by a signal.
pub(crate) fn run(
    provider: Arc<dyn SkillProvider>,
    args: RunArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<u8, RunFailure> {
    let fail = |e: &dyn std::fmt::Display| RunFailure(e.to_string());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| fail(&e))?;
    let root = skills_exec::private_root("skills-run");
    let session = "cli";
    let result = runtime.block_on(async {
        let skill = provider.get(&args.name).await.map_err(|e| fail(&e))?;
        let source = SkillSource::from_skill_location(&skill).ok_or_else(|| {
            RunFailure(format!(
                "skill `{}` has no local folder to run in",
                args.name
            ))
        })?;
        let rt: Arc<dyn WorkspaceRuntime> = if args.sandbox {
            Arc::new(
                SandboxRuntime::builder(&root)
                    .build_sandbox()
                    .map_err(|e| fail(&e))?,
            )
        } else {
            Arc::new(LocalRuntime::builder(&root).build().map_err(|e| fail(&e))?)
        };
        let outcome = async {
            rt.stage_skill(session, &source)
                .await
                .map_err(|e| fail(&e))?;
            let mut request = RunRequest::new(&args.name, args.command.join(" "));
            if let Some(t) = args.timeout {
                request = request.timeout_secs(t);
            }
            for g in &args.output_files {
                request = request.output_file(g);
            }
            rt.run(session, &request).await.map_err(|e| fail(&e))
        }
        .await;
        let _ = rt.cleanup(session).await;
        let _ = std::fs::remove_dir(&root);
        outcome
    })?;
    print(&result, args.json, out, err).map_err(|e| fail(&e))?;
    Ok(if result.timed_out {
        TIMED_OUT
    } else {
        result
            .exit_code
            .map_or(125, |c| u8::try_from(c.clamp(0, 255)).unwrap_or(1))
    })
}

fn print(
    result: &RunResult,
    json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<()> {
    if json {
        serde_json::to_writer_pretty(&mut *out, result)?;
        return writeln!(out);
    }
    out.write_all(result.stdout.as_bytes())?;
    err.write_all(result.stderr.as_bytes())?;
    for w in &result.warnings {
        writeln!(err, "warning: {}", crate::text::line(w))?;
    }
    if result.timed_out {
        writeln!(err, "timed out after {} ms", result.duration_ms)?;
    }
    if !result.output_files.is_empty() {
        out.flush()?;
        writeln!(out, "--- files")?;
        for f in &result.output_files {
            writeln!(
                out,
                "{}\t{}\t{}",
                crate::text::line(&f.name),
                f.size_bytes,
                f.mime_type
            )?;
        }
    }
    Ok(())
}
