//! The run tools over a [`WorkspaceRuntime`] (F-EXE-3, F-EXE-9): what the
//! `full` profile offers when an execution runtime (local, bubblewrap
//! sandbox, or a remote runner on wasm32) is plugged in with
//! [`AgentBuilder::runtime`](crate::AgentBuilder::runtime).
//!
//! The tool names are in the surface's operation table
//! ([`Surface::run_tools`]); the requests use the trpc-agent field names.
//! A run or exec call stages the skill with
//! [`WorkspaceRuntime::stage_from`] (a no-op when its content did not
//! change) and hands the request to the runtime. By default a run is refused
//! until the skill is loaded in that session.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;
use skills_core::SkillProvider;
use skills_workspace::{
    Attachment, ExecRequest, KillRequest, PollRequest, RunRequest, SessionId, StagedInput,
    WorkspaceError, WorkspaceErrorKind, WorkspaceRuntime, WriteStdinRequest,
};

use crate::library::MAX_NAME_LEN;
use crate::surface::{Operation, Surface, expected_args, tool_spec};
use crate::tool::{ToolError, ToolErrorKind, ToolSpec, clip, parse_args};

/// The runtime an agent runs skill commands on, and how.
#[derive(Clone)]
pub(crate) struct RunTools {
    pub(crate) runtime: Arc<dyn WorkspaceRuntime>,
    /// Whether a command may run only for a skill loaded in the session.
    pub(crate) require_loaded: bool,
    /// Whether the interactive session tools are offered.
    pub(crate) interactive: bool,
}

impl fmt::Debug for RunTools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunTools")
            .field("runtime", &self.runtime.name())
            .field("require_loaded", &self.require_loaded)
            .field("interactive", &self.interactive)
            .finish()
    }
}

/// Who is calling a run tool: the workspace, the skills counted as loaded,
/// where to stage from, the agent's surface (its load tool and argument
/// shapes, for messages), and the conversation's attachments not yet staged.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunContext<'a> {
    pub(crate) session_id: &'a SessionId,
    pub(crate) loaded: &'a BTreeSet<String>,
    pub(crate) provider: &'a Arc<dyn SkillProvider>,
    pub(crate) surface: &'a Surface,
    pub(crate) attachments: &'a [Attachment],
}

/// What a run tool call did: its result (the runtime's JSON, or the error
/// to show) and how many of the context's attachments it staged (all or
/// none), so the session records them as staged even when the command
/// then failed.
#[derive(Debug)]
pub(crate) struct RunAnswer {
    pub(crate) result: Result<String, ToolError>,
    pub(crate) staged: usize,
}

impl RunTools {
    /// The specs of the run tools `surface` names.
    pub(crate) fn specs(&self, surface: &Surface) -> Vec<ToolSpec> {
        let runtime = self.runtime.name();
        surface
            .run_tools(self.interactive)
            .into_iter()
            .map(|(name, op)| tool_spec(surface, name, op, "", runtime))
            .collect()
    }

    /// Runs the run operation `op` (called as `tool`) for `context`; the
    /// runtime's result as JSON. A run or exec first stages the skill, then
    /// the context's attachments (into `work/inputs/`; a run's
    /// `staged_inputs` lists them).
    pub(crate) async fn call(
        &self,
        context: &RunContext<'_>,
        op: Operation,
        tool: &str,
        arguments: &Value,
    ) -> RunAnswer {
        let mut staged = Vec::new();
        let result = self
            .call_inner(context, op, tool, arguments, &mut staged)
            .await;
        RunAnswer {
            result,
            staged: staged.len(),
        }
    }

    async fn call_inner(
        &self,
        context: &RunContext<'_>,
        op: Operation,
        tool: &str,
        arguments: &Value,
        staged: &mut Vec<StagedInput>,
    ) -> Result<String, ToolError> {
        let session = context.session_id;
        let runtime = &self.runtime;
        let expected = expected_args(context.surface, op);
        match op {
            Operation::Run => {
                let request: RunRequest = parse_args(tool, arguments, expected)?;
                self.stage(context, &request.spec.skill).await?;
                // Attachments that cannot be staged (the workspace is full)
                // never stop the command: the model may be freeing space.
                let warning = self.stage_attachments(context, staged).await.err();
                let mut result = runtime
                    .run(session, &request)
                    .await
                    .map_err(workspace_error)?;
                result.staged_inputs.splice(0..0, staged.iter().cloned());
                result.warnings.extend(warning.map(|err| err.to_string()));
                Ok(json(&result))
            }
            Operation::Exec => {
                let request: ExecRequest = parse_args(tool, arguments, expected)?;
                self.stage(context, &request.spec.skill).await?;
                // As for a run, but an exec's answer has no place for
                // staged inputs or warnings: the files are in
                // `work/inputs/` under their sanitized names, and a refusal
                // is retried by the next run, which reports it.
                let _refused = self.stage_attachments(context, staged).await;
                let output = runtime.start_exec(session, &request).await;
                Ok(json(&output.map_err(workspace_error)?))
            }
            Operation::WriteStdin => {
                let request: WriteStdinRequest = parse_args(tool, arguments, expected)?;
                let output = runtime.write_stdin(session, &request).await;
                Ok(json(&output.map_err(workspace_error)?))
            }
            Operation::Poll => {
                let request: PollRequest = parse_args(tool, arguments, expected)?;
                let output = runtime
                    .poll_exec(session, &request.session_id, request.yield_ms)
                    .await;
                Ok(json(&output.map_err(workspace_error)?))
            }
            Operation::Kill => {
                let request: KillRequest = parse_args(tool, arguments, expected)?;
                let output = runtime.kill_exec(session, &request.session_id).await;
                Ok(json(&output.map_err(workspace_error)?))
            }
            _ => Err(ToolError::new(
                ToolErrorKind::UnknownTool,
                format!("`{}` is not an execution tool", clip(tool)),
            )),
        }
    }

    /// Stages the context's attachments into `work/inputs/`: all of them,
    /// or none (the runtime refuses before writing when they do not fit
    /// together).
    async fn stage_attachments(
        &self,
        context: &RunContext<'_>,
        staged: &mut Vec<StagedInput>,
    ) -> Result<(), ToolError> {
        if context.attachments.is_empty() {
            return Ok(());
        }
        *staged = self
            .runtime
            .stage_attachments(context.session_id, context.attachments)
            .await
            .map_err(|err| {
                ToolError::new(
                    ToolErrorKind::Resource,
                    format!("the attached files could not be staged: {}", err.message()),
                )
            })?;
        Ok(())
    }

    /// Checks that `skill` may run and stages it into the session's
    /// workspace.
    async fn stage(&self, context: &RunContext<'_>, skill: &str) -> Result<(), ToolError> {
        if self.require_loaded && !context.loaded.contains(skill) {
            return Err(ToolError::new(
                ToolErrorKind::NotLoaded,
                format!(
                    "the skill `{}` is not loaded; call `{}` with it first, then run its commands",
                    clip(skill),
                    context.surface.load_tool()
                ),
            ));
        }
        if skill.len() > MAX_NAME_LEN {
            return Err(ToolError::new(
                ToolErrorKind::UnknownSkill,
                format!("no skill is named `{}`", clip(skill)),
            ));
        }
        self.runtime
            .stage_from(context.session_id, context.provider.as_ref(), skill)
            .await
            .map_err(|err| match err.kind() {
                WorkspaceErrorKind::NotFound => {
                    ToolError::new(ToolErrorKind::UnknownSkill, err.message())
                }
                WorkspaceErrorKind::Io | WorkspaceErrorKind::TooLarge => {
                    ToolError::new(ToolErrorKind::Resource, err.message())
                }
                _ => workspace_error(err),
            })?;
        Ok(())
    }
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

fn json<T: serde::Serialize>(value: &T) -> String {
    // The runtime's result types serialize to plain JSON objects.
    serde_json::to_string_pretty(value).unwrap_or_default()
}
