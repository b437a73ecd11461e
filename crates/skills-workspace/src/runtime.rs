//! The [`WorkspaceRuntime`] trait.

use std::fmt;

use async_trait::async_trait;
use skills_core::{MaybeSend, MaybeSync, SkillProvider};

use crate::error::{WorkspaceError, WorkspaceErrorKind, WorkspaceResult};
use crate::inputs::{Attachment, InputSpec, StagedInput};
use crate::requests::{
    CleanupReport, ExecOutput, ExecRequest, RunRequest, RunResult, WorkspaceFile, WriteStdinRequest,
};
use crate::session::SessionId;
use crate::staging::{SkillSource, StagedSkill, WorkspaceInfo};

/// A runtime that gives each session a workspace, stages skills into it and
/// runs their commands.
///
/// # Contract
/// * Every method takes the agent session's id, a [`SessionId`] (checked
///   by its constructor); a session has at most one workspace, created on
///   first use by any method or explicitly by
///   [`create_workspace`](WorkspaceRuntime::create_workspace). Sessions are
///   independent: nothing one session does is visible in another's workspace,
///   and one session's slow run never blocks another's.
/// * The layout seen by commands is `skills/<name>` (the staged skill, read-only
///   where the runtime can enforce it, holding `out`, `work` and `inputs` links
///   to the shared folders and a writable `.venv/`), `work/` (with
///   `work/inputs/`), `out/` and `runs/run_<timestamp>/`, with the variables
///   [`ENV_WORKSPACE_DIR`](crate::ENV_WORKSPACE_DIR) … [`ENV_SKILL_NAME`](crate::ENV_SKILL_NAME) set. The runtime keeps its own
///   records out of the workspace: the command can change anything there.
/// * [`stage_skill`](WorkspaceRuntime::stage_skill) copies a skill only when
///   its content changed since the last staging in that workspace.
/// * [`run`](WorkspaceRuntime::run) refuses a skill that has not been staged in
///   the session ([`WorkspaceErrorKind::SkillNotLoaded`]) unless the runtime was
///   configured to stage on demand; refuses a `cwd` or output glob leaving the
///   workspace ([`WorkspaceErrorKind::PathEscape`]); kills the whole process
///   tree on timeout and reports it as `timed_out` (not as an error); never
///   follows a link out of the workspace when collecting files.
/// * A command's failure (non-zero exit, timeout) is a successful
///   [`RunResult`]; errors are for requests that could not be carried out.
/// * [`cleanup`](WorkspaceRuntime::cleanup) kills the session's exec sessions
///   and removes its workspace; it never deletes anything outside the
///   runtime's workspace root.
///
/// Interactive sessions (`*_exec`, [`write_stdin`](WorkspaceRuntime::write_stdin))
/// default to [`WorkspaceErrorKind::Unsupported`], so a batch-only runtime (a
/// Kubernetes Job) implements only the first five methods.
///
/// The trait is object safe; agents hold an `Arc<dyn WorkspaceRuntime>`. On
/// `wasm32` its futures need not be `Send` (implement it with
/// `#[async_trait(?Send)]`), so a worker can forward calls to a remote runner.
#[cfg_attr(not(target_arch = "wasm32"), async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait(?Send))]
pub trait WorkspaceRuntime: MaybeSend + MaybeSync + fmt::Debug {
    /// A short name for logs and tool descriptions (`local`, `sandbox`, `docker`).
    fn name(&self) -> &str;

    /// Creates the session's workspace, or reports the existing one.
    async fn create_workspace(&self, session_id: &SessionId) -> WorkspaceResult<WorkspaceInfo>;

    /// Stages a skill into `skills/<name>`, copying only when its content changed.
    async fn stage_skill(
        &self,
        session_id: &SessionId,
        skill: &SkillSource,
    ) -> WorkspaceResult<StagedSkill>;

    /// Stages the skill `name` of `provider` (see
    /// [`SkillSource::from_provider`]): the one place a caller that holds a
    /// provider, such as an agent, stages a skill before running it.
    async fn stage_from(
        &self,
        session_id: &SessionId,
        provider: &dyn SkillProvider,
        name: &str,
    ) -> WorkspaceResult<StagedSkill> {
        let source = SkillSource::from_provider(provider, name).await?;
        self.stage_skill(session_id, &source).await
    }

    /// Places inputs into the workspace (also done by [`run`](WorkspaceRuntime::run)
    /// for [`CommandSpec::inputs`](crate::CommandSpec::inputs)).
    async fn stage_inputs(
        &self,
        session_id: &SessionId,
        inputs: &[InputSpec],
    ) -> WorkspaceResult<Vec<StagedInput>>;

    /// Stages files attached to the conversation into `work/inputs`, with
    /// sanitized, de-duplicated names (see [`sanitize_file_name`](crate::sanitize_file_name)).
    async fn stage_attachments(
        &self,
        session_id: &SessionId,
        attachments: &[Attachment],
    ) -> WorkspaceResult<Vec<StagedInput>>;

    /// Runs a command to completion and collects its outputs.
    async fn run(&self, session_id: &SessionId, request: &RunRequest)
    -> WorkspaceResult<RunResult>;

    /// Reads a workspace file (`out/a.txt` or `workspace://out/a.txt`), at most
    /// `max_bytes` of it, beneath the workspace root only.
    async fn read_file(
        &self,
        session_id: &SessionId,
        path: &str,
        max_bytes: u64,
    ) -> WorkspaceResult<WorkspaceFile>;

    /// Starts an interactive command and answers with its first output.
    async fn start_exec(
        &self,
        session_id: &SessionId,
        request: &ExecRequest,
    ) -> WorkspaceResult<ExecOutput> {
        let _ = (session_id, request);
        Err(unsupported(self.name(), "interactive sessions"))
    }

    /// Types into an exec session and answers with what it printed.
    async fn write_stdin(
        &self,
        session_id: &SessionId,
        request: &WriteStdinRequest,
    ) -> WorkspaceResult<ExecOutput> {
        let _ = (session_id, request);
        Err(unsupported(self.name(), "interactive sessions"))
    }

    /// Output of an exec session since the last look, waiting up to `yield_ms`
    /// for some.
    async fn poll_exec(
        &self,
        session_id: &SessionId,
        exec_id: &str,
        yield_ms: Option<u64>,
    ) -> WorkspaceResult<ExecOutput> {
        let _ = (session_id, exec_id, yield_ms);
        Err(unsupported(self.name(), "interactive sessions"))
    }

    /// Kills an exec session and its whole process tree.
    async fn kill_exec(
        &self,
        session_id: &SessionId,
        exec_id: &str,
    ) -> WorkspaceResult<ExecOutput> {
        let _ = (session_id, exec_id);
        Err(unsupported(self.name(), "interactive sessions"))
    }

    /// Kills the session's exec sessions and removes its workspace.
    async fn cleanup(&self, session_id: &SessionId) -> WorkspaceResult<CleanupReport>;
}

fn unsupported(runtime: &str, what: &str) -> WorkspaceError {
    WorkspaceError::new(
        WorkspaceErrorKind::Unsupported,
        format!("the `{runtime}` runtime does not offer {what}"),
    )
}
