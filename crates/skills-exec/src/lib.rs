//! Workspace runtimes for Agent Skills: the implementations of
//! [`WorkspaceRuntime`](skills_workspace::WorkspaceRuntime) that give each agent
//! session a workspace, stage skills into it and run their scripts.
//!
//! * [`LocalRuntime`] runs commands as local processes (`bash -c`), each in its
//!   own process group, and kills the whole process tree on timeout.
//! * [`SandboxRuntime`] runs the same commands inside bubblewrap (`bwrap`): new
//!   user, PID, network, IPC and UTS namespaces, no capabilities, no network,
//!   the system and the skill read-only, only the workspace writable.
//! * `ContainerRuntime` (feature `container`, on by default) runs each
//!   command in a container of its own on a Docker Engine API service
//!   (Docker, or Podman's), the workspace bind-mounted, no network.
//! * [`CommandPolicy`] restricts commands to allowed programs, without a
//!   shell, following launchers (`env`, `xargs`, `find -exec`, …) and `#!`
//!   lines to the programs they start.
//! * [`ArtifactService`] stores files a run saves, with versions
//!   ([`InMemoryArtifacts`], [`FsArtifacts`]).
//!
//! # What it must not depend on
//! No agent, model or provider-discovery code: it depends on `skills-workspace`
//! for the trait, the request and result types and the path rules,
//! on `skills-core` for skills, and on tokio for processes. `skills-agent` receives an `Arc<dyn WorkspaceRuntime>` and
//! never depends on this crate.
//!
//! # Design
//! * Workspaces and exec sessions live in concurrent maps keyed by session, so
//!   concurrent sessions never wait on one lock; all file work runs on tokio's
//!   blocking pool.
//! * A staged skill is copied only when its content changed: a cheap
//!   fingerprint (paths, sizes, times, inodes) is compared first, the content
//!   hash only when the fingerprint moved.
//! * Every process a run starts carries a per-run marker in its environment;
//!   at the end of a run the process group is killed and, when anything may
//!   be left (a timeout, an output pipe still open), `/proc` is swept for the
//!   marker, so children that called `setsid` or double-forked die too.
//! * The command is hostile (docs/exec.md, "Threat model"). Everything the
//!   runtime does inside a workspace goes through a handle on the session
//!   folder: writes never follow a link, reads stay beneath it
//!   (`openat2(RESOLVE_BENEATH)`), only regular files are read, never
//!   blocking on a FIFO; the runtime keeps no file of its own there.
//! * Every workspace is bounded ([`WorkspaceLimits`]): a disk cap measured
//!   during and after runs, output caps requests cannot raise, and a cap on
//!   interactive sessions and their lifetime.
//!
//! ```no_run
//! use skills_workspace::{RunRequest, SessionId, SkillSource, WorkspaceRuntime};
//! use skills_exec::LocalRuntime;
//! # async fn demo() -> Result<(), skills_workspace::WorkspaceError> {
//! let runtime = LocalRuntime::builder("/tmp/skills-workspaces").build()?;
//! let session: SessionId = "session-1".parse()?;
//! runtime.stage_skill(&session, &SkillSource::folder("csv-insights", "examples/skills/csv-insights")).await?;
//! let result = runtime
//!     .run(&session, &RunRequest::new("csv-insights", "echo hi > $OUTPUT_DIR/hi.txt").output_file("out/*.txt"))
//!     .await?;
//! assert_eq!(result.output_files[0].name, "out/hi.txt");
//! # Ok(()) }
//! ```

#[cfg(not(unix))]
compile_error!("skills-exec needs a Unix system (Linux for the sandbox)");

mod artifact;
mod capture;
mod child;
mod collect;
#[cfg(feature = "container")]
mod container;
mod engine;
mod exec;
mod fsutil;
mod inputs;
mod kill;
mod launchers;
mod limits;
mod policy;
mod quota;
mod root;
mod rundir;
mod runtime;
mod sandbox;
mod spawn_gate;
mod stage;
#[cfg(unix)]
mod supervisor;

pub use artifact::{Artifact, ArtifactService, FsArtifacts, InMemoryArtifacts};
pub use capture::{DEFAULT_OUTPUT_CAP, cap_text};
#[cfg(feature = "container")]
pub use container::{
    ContainerOptions, DEFAULT_IMAGE, HOSTNAME as CONTAINER_HOSTNAME, IMAGE_ENV, RUNTIME_LABEL,
    SESSION_LABEL, SOCKET_PATHS, default_host,
};
pub use limits::{
    DEFAULT_MAX_FILE_SIZE, DEFAULT_MAX_MEMORY, DEFAULT_MAX_PROCESSES, DEFAULT_SHM_SIZE,
    DEFAULT_TMP_SIZE, RunLimits,
};
pub use policy::{
    CommandPolicy, ENV_ALLOWED_COMMANDS, ENV_DENIED_COMMANDS, ParsedCommand, RISKY_ENV_VARS,
    is_risky_env_var, parse_command,
};
pub use quota::{
    DEFAULT_MAX_EXEC_LIFETIME, DEFAULT_MAX_EXEC_SESSIONS, DEFAULT_MAX_EXEC_SESSIONS_TOTAL,
    DEFAULT_WORKSPACE_MAX_BYTES, DEFAULT_WORKSPACE_MAX_FILES, WorkspaceLimits,
};
pub use root::private_root;
#[cfg(feature = "container")]
pub use runtime::ContainerRuntime;
pub use runtime::{LocalRuntime, RuntimeBuilder, SandboxRuntime};
pub use sandbox::{
    BWRAP_PATHS, DEFAULT_SANDBOX_USER, HELPER_PATHS, SandboxOptions, find_bwrap, find_helper,
};

/// The examples in `docs/exec.md`, compiled as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/exec.md")]
pub struct ExecGuide;
