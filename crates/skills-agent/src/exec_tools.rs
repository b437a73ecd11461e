//! The run and exec tools over any [`WorkspaceRuntime`] (F-EXE-3, F-EXE-9):
//! what the `full` profile offers when an execution runtime (local,
//! bubblewrap sandbox, or a remote runner on wasm32) is plugged in.
//!
//! Each call stages the skill into the session's workspace (a no-op when its
//! content did not change) and runs the request the model sent, whose JSON
//! uses the trpc-agent field names. By default a run is refused until the
//! skill is loaded in that session.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde_json::Value;
use skills_core::Skill;
use skills_workspace::{
    ExecRequest, RunRequest, SkillFile, SkillSource, WorkspaceError, WorkspaceErrorKind,
    WorkspaceRuntime, WriteStdinRequest, tool_schema,
};

use crate::config::{ExecContext, ExecutionTools};
use crate::surface::Surface;
use crate::tool::{ToolError, ToolErrorKind, ToolSpec, clip, decoded_arguments};

/// Largest skill (bytes of all its files) staged from an in-code provider.
const MAX_IN_MEMORY_SKILL_BYTES: u64 = 64 * 1024 * 1024;

/// The five execution operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Run,
    Exec,
    WriteStdin,
    Poll,
    Kill,
}

/// The tool names of each operation: the trpc-agent names on the trpc
/// surface, and names in the style of `load_skill` / `read_skill_file`
/// otherwise.
fn names(trpc: bool) -> [(&'static str, Op); 5] {
    if trpc {
        [
            ("skill_run", Op::Run),
            ("skill_exec", Op::Exec),
            ("skill_write_stdin", Op::WriteStdin),
            ("skill_poll_session", Op::Poll),
            ("skill_kill_session", Op::Kill),
        ]
    } else {
        [
            ("run_skill_command", Op::Run),
            ("start_skill_session", Op::Exec),
            ("write_skill_session", Op::WriteStdin),
            ("poll_skill_session", Op::Poll),
            ("kill_skill_session", Op::Kill),
        ]
    }
}

/// [`ExecutionTools`] over a [`WorkspaceRuntime`]: give it to
/// [`AgentBuilder::executor`](crate::AgentBuilder::executor) with
/// [`Profile::Full`](crate::Profile::Full).
///
/// Tools (trpc surface / default surface): `skill_run` / `run_skill_command`
/// (one command, its output and files), `skill_exec` / `start_skill_session`
/// (an interactive session on a terminal), `skill_write_stdin` /
/// `write_skill_session`, `skill_poll_session` / `poll_skill_session`,
/// `skill_kill_session` / `kill_skill_session`. Results are the runtime's
/// result as JSON.
#[derive(Clone)]
pub struct WorkspaceTools {
    runtime: Arc<dyn WorkspaceRuntime>,
    trpc: bool,
    require_loaded: bool,
    interactive: bool,
}

impl fmt::Debug for WorkspaceTools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkspaceTools")
            .field("runtime", &self.runtime.name())
            .field("trpc", &self.trpc)
            .field("require_loaded", &self.require_loaded)
            .field("interactive", &self.interactive)
            .finish()
    }
}

impl WorkspaceTools {
    /// The tools for `runtime`, named for `surface` (pass the agent's).
    pub fn new(runtime: Arc<dyn WorkspaceRuntime>, surface: &Surface) -> Self {
        Self {
            runtime,
            trpc: matches!(surface, Surface::Trpc),
            require_loaded: true,
            interactive: true,
        }
    }

    /// Whether a command may run only for a skill loaded in the session
    /// (default `true`).
    #[must_use]
    pub fn require_loaded(mut self, on: bool) -> Self {
        self.require_loaded = on;
        self
    }

    /// Whether to offer the interactive session tools (default `true`; turn
    /// off for a batch-only runtime).
    #[must_use]
    pub fn interactive(mut self, on: bool) -> Self {
        self.interactive = on;
        self
    }

    /// The runtime.
    pub fn runtime(&self) -> &Arc<dyn WorkspaceRuntime> {
        &self.runtime
    }

    fn op(&self, tool: &str) -> Option<Op> {
        names(self.trpc)
            .into_iter()
            .find(|(name, op)| *name == tool && (self.interactive || *op == Op::Run))
            .map(|(_, op)| op)
    }

    /// Checks that `skill` may run and stages it into the session's
    /// workspace.
    async fn stage(&self, context: &ExecContext<'_>, skill: &str) -> Result<(), ToolError> {
        if self.require_loaded && !context.loaded.contains(skill) {
            return Err(ToolError::new(
                ToolErrorKind::NotLoaded,
                format!(
                    "the skill `{}` is not loaded; call `{}` with it first, then run its commands",
                    clip(skill),
                    context.load_tool
                ),
            ));
        }
        let found = context.provider.get(skill).await.map_err(|err| {
            ToolError::new(
                ToolErrorKind::UnknownSkill,
                format!(
                    "the skill `{}` cannot be run: {}",
                    clip(skill),
                    err.message()
                ),
            )
        })?;
        let source = match SkillSource::from_skill_location(&found) {
            Some(source) => source,
            None => in_memory(context, &found).await?,
        };
        self.runtime
            .stage_skill(context.session_id, &source)
            .await
            .map_err(workspace_error)?;
        Ok(())
    }
}

/// A skill without a local folder (in-code, remote) as files in memory.
async fn in_memory(context: &ExecContext<'_>, skill: &Skill) -> Result<SkillSource, ToolError> {
    let mut files = vec![SkillFile::new(
        "SKILL.md",
        format!(
            "---\n{}\n---\n{}\n",
            skill.metadata.raw_frontmatter.trim_end(),
            skill.body
        ),
    )];
    let mut total = 0u64;
    for path in skill.resources.paths() {
        let bytes = context
            .provider
            .read_resource_bytes(skill.name(), &path)
            .await
            .map_err(|err| {
                ToolError::new(
                    ToolErrorKind::Resource,
                    format!(
                        "the file `{path}` of the skill cannot be staged: {}",
                        err.message()
                    ),
                )
            })?;
        total += bytes.bytes.len() as u64;
        if total > MAX_IN_MEMORY_SKILL_BYTES {
            return Err(ToolError::new(
                ToolErrorKind::Resource,
                format!(
                    "the skill `{}` is larger than {MAX_IN_MEMORY_SKILL_BYTES} bytes and cannot be staged",
                    skill.name()
                ),
            ));
        }
        let executable = path.starts_with("scripts/");
        files.push(SkillFile::new(path, bytes.bytes.to_vec()).executable(executable));
    }
    Ok(SkillSource::files(skill.name(), files))
}

fn workspace_error(err: WorkspaceError) -> ToolError {
    let kind = match err.kind() {
        WorkspaceErrorKind::SkillNotLoaded => ToolErrorKind::NotLoaded,
        WorkspaceErrorKind::InvalidRequest | WorkspaceErrorKind::PathEscape => {
            ToolErrorKind::InvalidArguments
        }
        WorkspaceErrorKind::PolicyDenied => ToolErrorKind::Denied,
        WorkspaceErrorKind::NotFound => ToolErrorKind::Resource,
        _ => ToolErrorKind::Failed,
    };
    ToolError::new(kind, err.to_string())
}

fn parse<T: DeserializeOwned>(tool: &str, arguments: &Value) -> Result<T, ToolError> {
    let invalid = |why: String| {
        ToolError::new(
            ToolErrorKind::InvalidArguments,
            format!("bad arguments for `{tool}`: {why}"),
        )
    };
    let value = decoded_arguments(arguments)
        .map_err(|err| invalid(format!("not valid JSON ({})", clip(&err.to_string()))))?;
    T::deserialize(&*value).map_err(|err| invalid(clip(&err.to_string())))
}

fn json<T: serde::Serialize>(value: &T) -> String {
    // The runtime's result types serialize to plain JSON objects.
    serde_json::to_string_pretty(value).unwrap_or_default()
}

#[derive(serde::Deserialize)]
struct SessionArgs {
    session_id: String,
    #[serde(default)]
    yield_ms: Option<u64>,
}

#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
impl ExecutionTools for WorkspaceTools {
    fn tools(&self) -> Vec<ToolSpec> {
        let runtime = self.runtime.name();
        names(self.trpc)
            .into_iter()
            .filter(|(_, op)| self.interactive || *op == Op::Run)
            .map(|(name, op)| {
                let (description, schema) = match op {
                    Op::Run => (
                        format!(
                            "Runs one shell command for a loaded skill in its workspace ({runtime} \
                             runtime): the skill's folder is the working directory, $OUTPUT_DIR \
                             collects files. Returns the exit code, stdout, stderr and the files \
                             matched by output_files."
                        ),
                        tool_schema::run_request(),
                    ),
                    Op::Exec => (
                        "Starts an interactive command for a loaded skill on a terminal and \
                         returns its first output and a session_id for the other session tools."
                            .to_owned(),
                        tool_schema::exec_request(),
                    ),
                    Op::WriteStdin => (
                        "Types into an interactive session (submit: true presses Enter) and \
                         returns the new output."
                            .to_owned(),
                        tool_schema::write_stdin_request(),
                    ),
                    Op::Poll => (
                        "Returns the new output of an interactive session and whether it is \
                         still running."
                            .to_owned(),
                        tool_schema::poll_request(),
                    ),
                    Op::Kill => (
                        "Ends an interactive session and everything it started.".to_owned(),
                        tool_schema::kill_request(),
                    ),
                };
                ToolSpec::new(name, description, schema)
            })
            .collect()
    }

    async fn call(
        &self,
        context: &ExecContext<'_>,
        tool: &str,
        arguments: &Value,
    ) -> Result<String, ToolError> {
        let Some(op) = self.op(tool) else {
            return Err(ToolError::new(
                ToolErrorKind::UnknownTool,
                format!("`{}` is not an execution tool", clip(tool)),
            ));
        };
        let session = context.session_id;
        match op {
            Op::Run => {
                let request: RunRequest = parse(tool, arguments)?;
                self.stage(context, &request.skill).await?;
                let result = self
                    .runtime
                    .run(session, &request)
                    .await
                    .map_err(workspace_error)?;
                Ok(json(&result))
            }
            Op::Exec => {
                let request: ExecRequest = parse(tool, arguments)?;
                self.stage(context, &request.skill).await?;
                let output = self
                    .runtime
                    .start_exec(session, &request)
                    .await
                    .map_err(workspace_error)?;
                Ok(json(&output))
            }
            Op::WriteStdin => {
                let request: WriteStdinRequest = parse(tool, arguments)?;
                let output = self
                    .runtime
                    .write_stdin(session, &request)
                    .await
                    .map_err(workspace_error)?;
                Ok(json(&output))
            }
            Op::Poll => {
                let args: SessionArgs = parse(tool, arguments)?;
                let output = self
                    .runtime
                    .poll_exec(session, &args.session_id, args.yield_ms)
                    .await
                    .map_err(workspace_error)?;
                Ok(json(&output))
            }
            Op::Kill => {
                let args: SessionArgs = parse(tool, arguments)?;
                let output = self
                    .runtime
                    .kill_exec(session, &args.session_id)
                    .await
                    .map_err(workspace_error)?;
                Ok(json(&output))
            }
        }
    }
}
