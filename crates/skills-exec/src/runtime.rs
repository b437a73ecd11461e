//! The public runtimes and their builder.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use skills_core::SkillProvider;
use skills_workspace::{
    Attachment, CleanupReport, ExecOutput, ExecRequest, InputSpec, RunRequest, RunResult,
    SessionId, SkillSource, StagedInput, StagedSkill, WorkspaceError, WorkspaceFile, WorkspaceInfo,
    WorkspaceResult, WorkspaceRuntime, WriteStdinRequest,
};

use crate::artifact::ArtifactService;
use crate::capture::DEFAULT_OUTPUT_CAP;
#[cfg(feature = "container")]
use crate::container::{ContainerOptions, Containers};
use crate::engine::{Config, Engine, Launcher, find_bash};
use crate::fsutil::Owner;
use crate::limits::{Enforcement, Kind, RunLimits};
use crate::policy::CommandPolicy;
use crate::quota::WorkspaceLimits;
use crate::sandbox::{Sandbox, SandboxOptions};

/// Default run timeout when the request gives none: 5 minutes.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
/// Longest timeout a request may ask for: 1 hour.
const MAX_TIMEOUT: Duration = Duration::from_secs(3600);

/// Configures a [`LocalRuntime`] or a [`SandboxRuntime`].
#[derive(Debug, Clone)]
pub struct RuntimeBuilder {
    root: PathBuf,
    policy: CommandPolicy,
    default_timeout: Duration,
    max_timeout: Duration,
    output_cap: usize,
    artifacts: Option<Arc<dyn ArtifactService>>,
    force_save_artifacts: bool,
    provider: Option<Arc<dyn SkillProvider>>,
    host_input_roots: Vec<PathBuf>,
    sandbox: SandboxOptions,
    workspace_limits: WorkspaceLimits,
    limits: RunLimits,
}

impl RuntimeBuilder {
    fn new(root: PathBuf) -> Self {
        Self {
            root,
            policy: CommandPolicy::from_env(),
            default_timeout: DEFAULT_TIMEOUT,
            max_timeout: MAX_TIMEOUT,
            output_cap: DEFAULT_OUTPUT_CAP,
            artifacts: None,
            force_save_artifacts: false,
            provider: None,
            host_input_roots: Vec::new(),
            sandbox: SandboxOptions::default(),
            workspace_limits: WorkspaceLimits::default(),
            limits: RunLimits::default(),
        }
    }

    /// Sets the command policy (default: [`CommandPolicy::from_env`]).
    #[must_use]
    pub fn policy(mut self, policy: CommandPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Sets the timeout used when a request gives none (default 5 minutes).
    #[must_use]
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// Sets the longest timeout a request may ask for (default 1 hour).
    #[must_use]
    pub fn max_timeout(mut self, timeout: Duration) -> Self {
        self.max_timeout = timeout;
        self
    }

    /// Sets the cap on captured stdout and stderr, each (default 64 KiB).
    #[must_use]
    pub fn output_cap(mut self, bytes: usize) -> Self {
        self.output_cap = bytes.max(64);
        self
    }

    /// Sets the artifact service for `artifact://` inputs and saved outputs.
    #[must_use]
    pub fn artifacts(mut self, service: Arc<dyn ArtifactService>) -> Self {
        self.artifacts = Some(service);
        self
    }

    /// Saves every file a run collects as an artifact, as if each request
    /// asked for it (`save_as_artifacts`), best effort: a file that cannot be
    /// saved is a warning of the result, and without an artifact service
    /// nothing is saved (one warning). Default `false`: only requests with
    /// `save_as_artifacts` or `outputs.save` save.
    #[must_use]
    pub fn force_save_artifacts(mut self, force: bool) -> Self {
        self.force_save_artifacts = force;
        self
    }

    /// Stages skills from `provider` on demand when a run names a skill that
    /// is not staged yet. Without a provider (the default), a run of a skill
    /// not staged in the session is refused with
    /// [`WorkspaceErrorKind::SkillNotLoaded`](skills_workspace::WorkspaceErrorKind::SkillNotLoaded).
    #[must_use]
    pub fn stage_on_demand(mut self, provider: Arc<dyn SkillProvider>) -> Self {
        self.provider = Some(provider);
        self
    }

    /// Allows `host://` inputs from below `folder` (none are allowed by default).
    #[must_use]
    pub fn allow_host_inputs(mut self, folder: impl Into<PathBuf>) -> Self {
        self.host_input_roots.push(folder.into());
        self
    }

    /// Sets the workspaces' limits: disk cap, caps requests are clamped to,
    /// interactive sessions (default [`WorkspaceLimits::default`]; threat
    /// model H7, H8, H9).
    #[must_use]
    pub fn workspace_limits(mut self, limits: WorkspaceLimits) -> Self {
        self.workspace_limits = limits;
        self
    }

    /// Sets the sandbox options (used by [`build_sandbox`](Self::build_sandbox)).
    #[must_use]
    pub fn sandbox_options(mut self, options: SandboxOptions) -> Self {
        self.sandbox = options;
        self
    }

    /// Sets the limits of every run (default [`RunLimits::default`]: 512
    /// processes, 2 GiB of memory, 1 GiB files, a 512 MiB `/tmp` and a
    /// 64 MiB `/dev/shm` in the sandbox). See docs/exec.md, "Limits".
    #[must_use]
    pub fn limits(mut self, limits: RunLimits) -> Self {
        self.limits = limits;
        self
    }

    fn config(
        self,
        launcher: Launcher,
        sandbox_owner: Option<Owner>,
        enforcement: Arc<Enforcement>,
    ) -> Result<Config, WorkspaceError> {
        // Created private, or refused when another user could change it
        // (threat model H1); traversable by the sandbox's user when it has
        // one (it must reach its session folder to mount it).
        // Only `bwrap`, started as the sandbox user, opens the session
        // folders by path; a container engine mounts them as root.
        let traversable = sandbox_owner.is_some() && matches!(launcher, Launcher::Sandbox(_));
        let (root, root_dir) = crate::root::prepare_root(&self.root, traversable)?;
        let host_input_roots = self
            .host_input_roots
            .iter()
            .filter_map(|p| p.canonicalize().ok())
            .collect();
        Ok(Config {
            root,
            launcher,
            policy: self.policy,
            default_timeout: self.default_timeout,
            max_timeout: self.max_timeout,
            output_cap: self.output_cap,
            artifacts: self.artifacts,
            force_save_artifacts: self.force_save_artifacts,
            provider: self.provider,
            host_input_roots,
            bash: find_bash()?,
            root_dir: Arc::new(root_dir),
            sandbox_owner,
            limits: self.workspace_limits,
            enforcement,
        })
    }

    /// Builds a [`LocalRuntime`] (creates the workspace root).
    pub fn build(self) -> Result<LocalRuntime, WorkspaceError> {
        let enforcement = Arc::new(Enforcement::new(self.limits.clone(), Kind::Local));
        let cfg = self.config(Launcher::Local, None, enforcement)?;
        Ok(LocalRuntime {
            engine: Arc::new(Engine::new(cfg, "local")),
        })
    }

    /// Builds a [`SandboxRuntime`]: finds `bwrap` at a fixed system path and
    /// the sandbox helper ([`find_helper`](crate::find_helper)), and checks
    /// what can be checked without starting them (blocking, no process
    /// started: the first run starts the sandbox). Fails with
    /// [`WorkspaceErrorKind::Unavailable`](skills_workspace::WorkspaceErrorKind::Unavailable)
    /// when bubblewrap or the helper is
    /// missing or user namespaces are off; a sandbox that still cannot
    /// start makes the first run fail with the same kind and `bwrap`'s
    /// reason.
    pub fn build_sandbox(self) -> Result<SandboxRuntime, WorkspaceError> {
        let sandbox = Sandbox::new(&self.sandbox, self.limits.clone())?;
        let owner = sandbox_owner(&sandbox);
        let enforcement = Arc::clone(&sandbox.enforcement);
        let cfg = self.config(Launcher::Sandbox(Box::new(sandbox)), owner, enforcement)?;
        if let Some(owner) = owner {
            // `bwrap` runs as the sandbox user and mounts workspaces by
            // name: it must be able to reach the root.
            crate::sandbox::check_reachable(
                &cfg.root.join("x"),
                crate::sandbox::SandboxOwner {
                    uid: owner.uid,
                    gid: owner.gid,
                },
            )?;
        }
        Ok(SandboxRuntime {
            engine: Arc::new(Engine::new(cfg, "sandbox")),
        })
    }
}

#[cfg(feature = "container")]
impl RuntimeBuilder {
    /// Builds a [`ContainerRuntime`]: connects to the engine
    /// ([`ContainerOptions::host`], `DOCKER_HOST` or a default socket),
    /// checks it answers and has the image. Fails with
    /// [`WorkspaceErrorKind::Unavailable`](skills_workspace::WorkspaceErrorKind::Unavailable)
    /// saying how to start an engine or build the image. The run limits
    /// ([`limits`](Self::limits)) become the containers' (memory, processes,
    /// file size, `/tmp` and `/dev/shm` sizes).
    pub async fn build_container(
        self,
        options: ContainerOptions,
    ) -> Result<ContainerRuntime, WorkspaceError> {
        let containers = Arc::new(Containers::connect(&options, self.limits.clone()).await?);
        let owner = containers.owner().map(|(uid, gid)| Owner { uid, gid });
        let enforcement = Arc::new(Enforcement::by_engine(self.limits.clone()));
        let launcher = Launcher::Container(Arc::clone(&containers));
        let cfg =
            crate::fsutil::blocking(move || self.config(launcher, owner, enforcement)).await?;
        Ok(ContainerRuntime {
            engine: Arc::new(Engine::new(cfg, "container")),
            containers,
        })
    }
}

/// Runs each command in a container of its own on a Docker Engine API
/// service (Docker, or Podman's), the workspace on this host bind-mounted
/// (see docs/exec.md, "The container runtime"). Built with
/// [`RuntimeBuilder::build_container`]. Interactive sessions are not
/// offered: `start_exec` answers
/// [`Unsupported`](skills_workspace::WorkspaceErrorKind::Unsupported), so
/// the other exec methods find no session
/// ([`NotFound`](skills_workspace::WorkspaceErrorKind::NotFound)).
#[cfg(feature = "container")]
#[derive(Debug, Clone)]
pub struct ContainerRuntime {
    engine: Arc<Engine>,
    containers: Arc<Containers>,
}

#[cfg(feature = "container")]
impl ContainerRuntime {
    /// A builder for workspaces under `root`; finish with
    /// [`RuntimeBuilder::build_container`].
    pub fn builder(root: impl Into<PathBuf>) -> RuntimeBuilder {
        RuntimeBuilder::new(root.into())
    }

    /// The workspace root folder (canonical).
    pub fn root(&self) -> &std::path::Path {
        &self.engine.cfg.root
    }

    /// The engine's address (`unix:///…`).
    pub fn host(&self) -> &str {
        self.containers.host()
    }

    /// The image commands run in.
    pub fn image(&self) -> &str {
        self.containers.image()
    }
}

/// The host user the sandbox's commands run as, who gets the folders a
/// command may write (threat model H6): set by the sandbox side when the
/// runtime runs as root and the sandbox runs as an unprivileged host user
/// (contract decision 2); `None` while commands keep the runtime's own host
/// user.
fn sandbox_owner(sandbox: &Sandbox) -> Option<Owner> {
    sandbox.owner().map(|o| Owner {
        uid: o.uid,
        gid: o.gid,
    })
}

/// Runs skill commands as local processes, one workspace per session under a
/// root folder. No isolation beyond the workspace layout: use it for trusted
/// skills, or with a [`CommandPolicy`].
#[derive(Debug, Clone)]
pub struct LocalRuntime {
    engine: Arc<Engine>,
}

impl LocalRuntime {
    /// A builder for workspaces under `root`.
    pub fn builder(root: impl Into<PathBuf>) -> RuntimeBuilder {
        RuntimeBuilder::new(root.into())
    }

    /// The workspace root folder (canonical).
    pub fn root(&self) -> &std::path::Path {
        &self.engine.cfg.root
    }
}

/// Runs skill commands inside bubblewrap (see the crate docs for what is
/// isolated). Built with [`RuntimeBuilder::build_sandbox`].
#[derive(Debug, Clone)]
pub struct SandboxRuntime {
    engine: Arc<Engine>,
}

impl SandboxRuntime {
    /// A builder for workspaces under `root`; finish with
    /// [`RuntimeBuilder::build_sandbox`].
    pub fn builder(root: impl Into<PathBuf>) -> RuntimeBuilder {
        RuntimeBuilder::new(root.into())
    }

    /// The workspace root folder (canonical).
    pub fn root(&self) -> &std::path::Path {
        &self.engine.cfg.root
    }
}

macro_rules! delegate_runtime {
    ($ty:ty) => {
        #[async_trait]
        impl WorkspaceRuntime for $ty {
            fn name(&self) -> &str {
                self.engine.name
            }

            async fn create_workspace(
                &self,
                session_id: &SessionId,
            ) -> WorkspaceResult<WorkspaceInfo> {
                self.engine.create_workspace(session_id.as_str()).await
            }

            async fn stage_skill(
                &self,
                session_id: &SessionId,
                skill: &SkillSource,
            ) -> WorkspaceResult<StagedSkill> {
                self.engine.stage_skill(session_id.as_str(), skill).await
            }

            async fn stage_inputs(
                &self,
                session_id: &SessionId,
                inputs: &[InputSpec],
            ) -> WorkspaceResult<Vec<StagedInput>> {
                self.engine.stage_inputs(session_id.as_str(), inputs).await
            }

            async fn stage_attachments(
                &self,
                session_id: &SessionId,
                attachments: &[Attachment],
            ) -> WorkspaceResult<Vec<StagedInput>> {
                self.engine
                    .stage_attachments(session_id.as_str(), attachments)
                    .await
            }

            async fn run(
                &self,
                session_id: &SessionId,
                request: &RunRequest,
            ) -> WorkspaceResult<RunResult> {
                self.engine.run(session_id.as_str(), request).await
            }

            async fn read_file(
                &self,
                session_id: &SessionId,
                path: &str,
                max_bytes: u64,
            ) -> WorkspaceResult<WorkspaceFile> {
                self.engine
                    .read_file(session_id.as_str(), path, max_bytes)
                    .await
            }

            async fn start_exec(
                &self,
                session_id: &SessionId,
                request: &ExecRequest,
            ) -> WorkspaceResult<ExecOutput> {
                crate::exec::start(&self.engine, session_id.as_str(), request).await
            }

            async fn write_stdin(
                &self,
                session_id: &SessionId,
                request: &WriteStdinRequest,
            ) -> WorkspaceResult<ExecOutput> {
                let session = self
                    .engine
                    .exec_session(session_id.as_str(), &request.session_id)?;
                let answer = session.write(request).await?;
                session.finish(&self.engine, answer).await
            }

            async fn poll_exec(
                &self,
                session_id: &SessionId,
                exec_id: &str,
                yield_ms: Option<u64>,
            ) -> WorkspaceResult<ExecOutput> {
                let session = self.engine.exec_session(session_id.as_str(), exec_id)?;
                let answer = session.poll(yield_ms).await;
                session.finish(&self.engine, answer).await
            }

            async fn kill_exec(
                &self,
                session_id: &SessionId,
                exec_id: &str,
            ) -> WorkspaceResult<ExecOutput> {
                let session = self.engine.exec_session(session_id.as_str(), exec_id)?;
                let _ = session.kill().await;
                let answer = session.poll(Some(0)).await;
                session.finish(&self.engine, answer).await
            }

            async fn cleanup(&self, session_id: &SessionId) -> WorkspaceResult<CleanupReport> {
                self.engine.cleanup(session_id.as_str()).await
            }
        }
    };
}

delegate_runtime!(LocalRuntime);
delegate_runtime!(SandboxRuntime);
#[cfg(feature = "container")]
delegate_runtime!(ContainerRuntime);
