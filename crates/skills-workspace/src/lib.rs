//! The execution contract between an agent and a workspace runtime: the
//! [`WorkspaceRuntime`] trait (F-EXE-1 … F-EXE-5, F-EXE-9) that gives each
//! agent session a workspace where skill scripts run, the request and result
//! types a `skill_run` / `skill_exec` tool exchanges with a model, and the
//! pure rules every runtime shares (paths, input URIs, output manifests,
//! session ids).
//!
//! # Who should depend on this crate
//! Anyone implementing a runtime (`skills-exec`, a container engine, a remote
//! runner reached over HTTP from a wasm worker) or offering run and exec tools
//! to a model (`skills-agent`, `skills-mcp`). Agents hold an
//! `Arc<dyn WorkspaceRuntime>` and never depend on an implementation.
//!
//! # What it must not depend on
//! No I/O of any kind: no file system, network, processes, clocks, threads or
//! async runtime (no tokio). The crate builds for `wasm32-unknown-unknown`. It
//! depends on `skills-core` for the skill types only; `skills-core` never
//! depends on it. Implementations live in `skills-exec`.
//!
//! # Design
//! * The JSON shapes follow the trpc-agent tools (field names and aliases), so
//!   the same model prompts work; [`tool_schema`] gives their JSON Schemas.
//! * Path rules are lexical and pure ([`resolve_cwd`], [`normalize_output_glob`],
//!   [`sanitize_file_name`], [`InputSource::parse`]): a runtime still opens
//!   files beneath its workspace by handle.
//! * A command's failure (non-zero exit, timeout) is a successful [`RunResult`];
//!   a [`WorkspaceError`] is for requests that could not be carried out.
//!
//! ```
//! use skills_workspace::{RunRequest, resolve_cwd};
//! let request = RunRequest::new("csv-insights", "python3 scripts/report.py").cwd("$OUTPUT_DIR");
//! let cwd = resolve_cwd(request.spec.cwd.as_deref(), &request.spec.skill, "runs/run_1", "/ws/s1");
//! assert_eq!(cwd.unwrap(), "out");
//! ```

mod error;
mod inputs;
mod outputs;
mod paths;
mod requests;
mod runtime;
mod session;
mod staging;
pub mod tool_schema;

pub use error::{WorkspaceError, WorkspaceErrorKind, WorkspaceResult};
pub use inputs::{Attachment, InputMode, InputSource, InputSpec, StagedInput};
pub use outputs::{
    DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_FILES, DEFAULT_MAX_TOTAL_BYTES, OutputFile, OutputSpec,
    SavedArtifact,
};
pub use paths::{
    ENV_OUTPUT_DIR, ENV_RUN_DIR, ENV_SKILL_NAME, ENV_SKILLS_DIR, ENV_WORK_DIR, ENV_WORKSPACE_DIR,
    INPUTS_SUBDIR, OUTPUT_SUBDIR, RUNS_SUBDIR, SKILLS_SUBDIR, WORK_SUBDIR, WORKSPACE_SCHEME,
    dedupe_file_name, normalize_output_glob, normalize_relative, resolve_cwd, sanitize_file_name,
};
pub use requests::{
    CleanupReport, CommandSpec, ExecOutput, ExecRequest, ExecStatus, Interaction, InteractionKind,
    KillRequest, PollRequest, RunIo, RunRequest, RunResult, WorkspaceFile, WriteStdinRequest,
};
pub use runtime::WorkspaceRuntime;
pub use session::{MAX_SESSION_ID_CHARS, SessionId, validate_session_id};
pub use staging::{MAX_IN_MEMORY_SKILL_BYTES, SkillFile, SkillSource, StagedSkill, WorkspaceInfo};
