//! `skills run`: stage one skill into a throw-away workspace, run a command
//! in it (locally or in the bubblewrap sandbox), print its output and the
//! files it produced.
//!
//! The files listed are what the run left in `out/` (`$OUTPUT_DIR`), in
//! subfolders too ([`DEFAULT_OUTPUT_GLOB`]), with the size and MIME type the
//! runtime reports; `--output-files GLOB` lists (and, with `--json`, inlines)
//! the files matching its globs instead. Folders are not entries of their
//! own: a file in a subfolder is listed by its path (`out/charts/a.png`), an
//! empty folder not at all.

use std::io::Write;
use std::sync::Arc;

use skills_core::SkillProvider;
use skills_workspace::{InputSpec, RunRequest, RunResult, SessionId, SkillSource};

use crate::runtime_flags::RuntimeFlags;

/// What `skills run` was asked to do.
#[derive(Debug)]
pub(crate) struct RunArgs {
    pub(crate) name: String,
    pub(crate) command: Vec<String>,
    /// Where the command runs.
    pub(crate) mode: crate::agent::RunMode,
    pub(crate) timeout: Option<u64>,
    pub(crate) output_files: Vec<String>,
    /// Inputs to stage before the command (`--input FROM[=TO]`).
    pub(crate) inputs: Vec<String>,
    /// Artifacts and host inputs.
    pub(crate) runtime: RuntimeFlags,
    pub(crate) json: bool,
    /// Standard output is a terminal: the command's output is escaped there
    /// ([`crate::text::terminal_safe`]).
    pub(crate) stdout_terminal: bool,
    /// Standard error is a terminal.
    pub(crate) stderr_terminal: bool,
}

/// Why `skills run` could not run the command (exit code 2).
#[derive(Debug)]
pub(crate) struct RunFailure(pub(crate) String);

/// What is listed without `--output-files`: every file under `out/`.
pub(crate) const DEFAULT_OUTPUT_GLOB: &str = "out/**";

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
    args.runtime.check().map_err(RunFailure)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| fail(&e))?;
    let root = skills_exec::private_root("skills-run");
    let session = &SessionId::generate("cli");
    let result = runtime.block_on(async {
        let skill = provider.get(&args.name).await.map_err(|e| fail(&e))?;
        let source = SkillSource::from_skill_location(&skill).ok_or_else(|| {
            RunFailure(format!(
                "skill `{}` has no local folder to run in",
                args.name
            ))
        })?;
        let rt = args
            .runtime
            .runtime(&root, args.mode)
            .await
            .map_err(|e| fail(&e))?;
        let outcome = async {
            rt.stage_skill(session, &source)
                .await
                .map_err(|e| fail(&e))?;
            let mut request = RunRequest::new(&args.name, args.command.join(" "));
            if let Some(t) = args.timeout {
                request = request.timeout_secs(t);
            }
            if args.output_files.is_empty() {
                // Listed, not read: names, sizes and types only.
                request = request
                    .output_file(DEFAULT_OUTPUT_GLOB)
                    .omit_inline_content(true);
            }
            for g in &args.output_files {
                request = request.output_file(g);
            }
            for i in &args.inputs {
                request = request.input(parse_input(i));
            }
            rt.run(session, &request).await.map_err(|e| fail(&e))
        }
        .await;
        let _ = rt.cleanup(session).await;
        let _ = std::fs::remove_dir(&root);
        outcome
    })?;
    print(&result, &args, out, err).map_err(|e| fail(&e))?;
    Ok(if result.timed_out {
        TIMED_OUT
    } else {
        result
            .exit_code
            .map_or(125, |c| u8::try_from(c.clamp(0, 255)).unwrap_or(1))
    })
}

/// `--input FROM[=TO]`: stage FROM (`host:///abs`, `artifact://name[@v]`,
/// `workspace://rel`, `skill://name/rel`) at TO (default
/// `work/inputs/<basename>`). FROM cannot contain `=`.
pub(crate) fn parse_input(text: &str) -> InputSpec {
    match text.split_once('=') {
        Some((from, to)) => InputSpec::new(from).to(to),
        None => InputSpec::new(text),
    }
}

fn print(
    result: &RunResult,
    args: &RunArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> std::io::Result<()> {
    if args.json {
        serde_json::to_writer_pretty(&mut *out, result)?;
        return writeln!(out);
    }
    // The command's output is unchanged into a pipe or a file; on a terminal
    // its control sequences are escaped (a skill's command, sandboxed or
    // not, must not set the title or write the clipboard).
    let shown = crate::text::for_terminal(&result.stdout, args.stdout_terminal);
    out.write_all(shown.as_bytes())?;
    let shown = crate::text::for_terminal(&result.stderr, args.stderr_terminal);
    err.write_all(shown.as_bytes())?;
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
    if !result.artifact_files.is_empty() {
        out.flush()?;
        writeln!(out, "--- artifacts")?;
        for a in &result.artifact_files {
            writeln!(
                out,
                "{}\t{}\t{}",
                crate::text::line(&a.name),
                a.version,
                crate::text::line(&a.source)
            )?;
        }
    }
    Ok(())
}
