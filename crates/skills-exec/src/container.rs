//! The container runtime (F-EXE-8): runs each command in a container of its
//! own on a Docker Engine API service (Docker, or Podman's compatible
//! service), through [bollard](https://docs.rs/bollard).
//!
//! The workspace stays on the host, where the engine stages skills,
//! collects outputs and measures the disk exactly as for the other two
//! runtimes; only the command moves into a container. Each run gets a new
//! container, started from the configured image with:
//!
//! * the session's workspace bind-mounted at its own host path (so the
//!   `WORKSPACE_DIR` … variables mean the same inside and out), writable,
//!   and its `skills/` folder mounted again read-only on top (each staged
//!   skill's `.venv/` writable, as in the sandbox);
//! * a read-only root file system, a private `/tmp` and `/dev/shm` of the
//!   run's sizes, no network (`none`), every capability dropped,
//!   `no-new-privileges`, a non-root user (65534 `nobody`, or the
//!   runtime's own user when it is not root);
//! * the run's limits as the engine's: memory (and no swap beyond it),
//!   processes (`pids`), CPUs when set, and `nofile`, `nproc`, `fsize` and
//!   `core` limits (runc refuses to start a container without explicit
//!   `nofile` and `nproc` limits on some hosts);
//! * standard input, when the request gives one, from a file the runtime
//!   writes into the run folder (`.stdin`, through the workspace handle).
//!
//! A timeout kills the whole container; a run whose future is dropped
//! (the disk cap was passed, the caller gave up) has its container removed
//! in the background. Output is read from the attach stream with the same
//! caps as a local process's pipes.
//!
//! **Why a container per run** and not one per workspace with an `exec`
//! per run: measured here with Podman 4.3 (docs/exec.md, "The container
//! runtime"), an `exec` costs about as much as a new container, and a new
//! container leaves nothing behind (background processes of a run die with
//! it), so a run never sees another's processes and a timeout is one kill.
//!
//! Host-side rules (threat model, docs/exec.md): the runtime checks that
//! the folders it asks the engine to mount are real folders (never links)
//! before each run; inside a run they are mount points, which a command
//! cannot rename or replace.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bollard::Docker;
use bollard::container::LogOutput;
use bollard::models::{
    ContainerCreateBody, HostConfig, Mount, MountBindOptions, MountType, ResourcesUlimits,
};
use bollard::query_parameters::{
    AttachContainerOptionsBuilder, KillContainerOptionsBuilder, RemoveContainerOptionsBuilder,
    WaitContainerOptionsBuilder,
};
use futures_util::StreamExt;
use skills_workspace::{SKILLS_SUBDIR, WorkspaceError, WorkspaceErrorKind, WorkspaceResult};
use tracing::Instrument;

use crate::capture::Captured;
use crate::engine::{Outcome, Prepared};
use crate::limits::RunLimits;

/// The image used when none is configured: built offline by
/// `deploy/runner/build-image.sh` (busybox and a static bash, user 65534).
pub const DEFAULT_IMAGE: &str = "localhost/skills-runner:latest";

/// The variable naming the image (`skills` CLI), when no flag does.
pub const IMAGE_ENV: &str = "SKILLS_CONTAINER_IMAGE";

/// Where the engine's socket is looked for when `DOCKER_HOST` is not set,
/// in order (`$XDG_RUNTIME_DIR/podman/podman.sock`, a rootless Podman's,
/// comes after these).
pub const SOCKET_PATHS: [&str; 3] = [
    "/run/podman/podman.sock",
    "/var/run/docker.sock",
    "/run/docker.sock",
];

/// The label every container of this runtime carries (its value: the
/// session id), so leftovers can be found and removed.
pub const SESSION_LABEL: &str = "dev.skills.session";

/// The label naming the runtime instance that started a container.
pub const RUNTIME_LABEL: &str = "dev.skills.runtime";

/// The containers' host name.
pub const HOSTNAME: &str = "skills-container";

/// How long an engine call (other than waiting for the command) may take.
const ENGINE_TIMEOUT: Duration = Duration::from_secs(60);

/// Open files per process in a container.
const NOFILE: i64 = 4096;

/// The name of the standard-input file in the run folder.
pub(crate) const STDIN_FILE: &str = ".stdin";

/// Where the engine is and what the containers look like (see
/// [`RuntimeBuilder::build_container`](crate::RuntimeBuilder::build_container)).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ContainerOptions {
    /// The engine's address (`unix:///run/podman/podman.sock`,
    /// `tcp://host:2375`); `None`: `DOCKER_HOST`, else the first of
    /// [`SOCKET_PATHS`] (and a rootless Podman's socket) that exists.
    pub host: Option<String>,
    /// The image commands run in (default [`DEFAULT_IMAGE`]); it must have
    /// `/bin/sh`, and `/bin/bash` or `/usr/bin/bash` (commands run with
    /// `bash -c`).
    pub image: String,
    /// The user commands run as, `uid:gid`; `None`: 65534 (`nobody`) when
    /// the runtime runs as root, else the runtime's own user (so the files
    /// a command writes are the runtime's, with a rootful engine).
    pub user: Option<(u32, u32)>,
    /// CPUs a run may use (`1.5`: one and a half); `None`: no limit.
    pub cpus: Option<f64>,
    /// The container network (`none` by default: no network at all).
    pub network: String,
}

impl Default for ContainerOptions {
    fn default() -> Self {
        Self {
            host: None,
            image: DEFAULT_IMAGE.to_owned(),
            user: None,
            cpus: None,
            network: "none".to_owned(),
        }
    }
}

impl ContainerOptions {
    /// The defaults: engine from the environment, [`DEFAULT_IMAGE`], no
    /// network.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the engine's address (`unix:///path`, `tcp://host:port`).
    #[must_use]
    pub fn host(mut self, host: impl Into<String>) -> Self {
        self.host = Some(host.into());
        self
    }

    /// Sets the image.
    #[must_use]
    pub fn image(mut self, image: impl Into<String>) -> Self {
        self.image = image.into();
        self
    }

    /// Sets the user commands run as.
    #[must_use]
    pub fn user(mut self, uid: u32, gid: u32) -> Self {
        self.user = Some((uid, gid));
        self
    }

    /// Sets the CPUs a run may use.
    #[must_use]
    pub fn cpus(mut self, cpus: f64) -> Self {
        self.cpus = Some(cpus);
        self
    }

    /// Sets the container network (`none`, or an engine network such as
    /// `bridge` or `slirp4netns` to give commands a network).
    #[must_use]
    pub fn network(mut self, network: impl Into<String>) -> Self {
        self.network = network.into();
        self
    }
}

/// The engine's address: `DOCKER_HOST` when set, else the first of
/// [`SOCKET_PATHS`] and `$XDG_RUNTIME_DIR/podman/podman.sock` that exists.
pub fn default_host() -> Option<String> {
    if let Ok(host) = std::env::var("DOCKER_HOST")
        && !host.trim().is_empty()
    {
        return Some(host);
    }
    let mut candidates: Vec<std::path::PathBuf> =
        SOCKET_PATHS.iter().map(std::path::PathBuf::from).collect();
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR") {
        candidates.push(Path::new(&dir).join("podman/podman.sock"));
        candidates.push(Path::new(&dir).join("docker.sock"));
    }
    candidates
        .into_iter()
        .find(|p| p.exists())
        .map(|p| format!("unix://{}", p.display()))
}

/// How to start an engine, for error messages.
const START_HINT: &str = "start one (`podman system service --time=0 unix:///run/podman/podman.sock`, \
     or Docker) and point DOCKER_HOST at its socket";

/// A connected engine and what each run's container gets.
#[derive(Debug)]
pub(crate) struct Containers {
    docker: Docker,
    host: String,
    image: String,
    user: (u32, u32),
    cpus: Option<f64>,
    network: String,
    limits: RunLimits,
    /// This runtime instance's label value.
    instance: String,
}

/// `true` when the runtime runs as root.
fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

impl Containers {
    /// Connects to the engine, checks it answers and has the image.
    pub(crate) async fn connect(
        options: &ContainerOptions,
        limits: RunLimits,
    ) -> WorkspaceResult<Self> {
        let unavailable = |msg: String| WorkspaceError::new(WorkspaceErrorKind::Unavailable, msg);
        let host = match &options.host {
            Some(h) => h.clone(),
            None => default_host().ok_or_else(|| {
                unavailable(format!(
                    "no container engine found: DOCKER_HOST is not set and none of {} exists; {START_HINT}",
                    SOCKET_PATHS.join(", ")
                ))
            })?,
        };
        if options.image.trim().is_empty() {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::InvalidRequest,
                "the container image is empty",
            ));
        }
        if let Some(c) = options.cpus
            && !(c.is_finite() && c > 0.0)
        {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::InvalidRequest,
                format!("cpus must be a positive number, not {c}"),
            ));
        }
        let docker = Docker::connect_with_host(&host)
            .map_err(|e| unavailable(format!("container engine at {host}: {e}; {START_HINT}")))?
            .with_timeout(ENGINE_TIMEOUT);
        let docker = async {
            docker.ping().await?;
            docker.negotiate_version().await
        }
        .instrument(tracing::info_span!("workspace.container.connect", host = %host))
        .await
        .map_err(|e| {
            unavailable(format!(
                "the container engine at {host} does not answer: {e}; {START_HINT}"
            ))
        })?;
        docker.inspect_image(&options.image).await.map_err(|e| {
            unavailable(format!(
                "the container engine at {host} has no image {:?} ({e}); build the default one \
                 offline with `bash deploy/runner/build-image.sh` (see docs/exec.md, \"The \
                 container runtime\") or choose another image (`--container-image` or \
                 SKILLS_CONTAINER_IMAGE with the skills CLI)",
                options.image
            ))
        })?;
        let user = options.user.unwrap_or_else(|| {
            if is_root() {
                crate::sandbox::DEFAULT_SANDBOX_USER
            } else {
                (
                    rustix::process::geteuid().as_raw(),
                    rustix::process::getegid().as_raw(),
                )
            }
        });
        Ok(Self {
            docker,
            host,
            image: options.image.clone(),
            user,
            cpus: options.cpus,
            network: options.network.clone(),
            limits,
            instance: crate::engine::unique_id(),
        })
    }

    /// The engine's address.
    pub(crate) fn host(&self) -> &str {
        &self.host
    }

    /// The image.
    pub(crate) fn image(&self) -> &str {
        &self.image
    }

    /// Who gets the folders a command may write: the container's user when
    /// the runtime runs as root (it hands the workspace over, as for the
    /// sandbox), else nobody (the command writes as the runtime's user).
    pub(crate) fn owner(&self) -> Option<(u32, u32)> {
        (is_root() && self.user.0 != 0).then_some(self.user)
    }

    /// The container of one run, with `mounts` (see [`checked_mounts`]).
    fn create_body(
        &self,
        session: &str,
        ws_root: &Path,
        prepared: &Prepared,
        stdin: bool,
        mounts: Vec<Mount>,
    ) -> WorkspaceResult<ContainerCreateBody> {
        let size = |bytes: u64, default: &str| {
            if bytes == 0 {
                default.to_owned()
            } else {
                format!("size={bytes}")
            }
        };
        let mut tmpfs = HashMap::new();
        tmpfs.insert(
            "/tmp".to_owned(),
            format!(
                "{},mode=1777,nosuid,nodev",
                size(self.limits.tmp_size, "size=50%")
            ),
        );
        tmpfs.insert(
            "/dev/shm".to_owned(),
            format!(
                "{},mode=1777,nosuid,nodev,noexec",
                size(self.limits.shm_size, "size=64m")
            ),
        );
        let ulimit = |name: &str, value: i64| ResourcesUlimits {
            name: Some(name.to_owned()),
            soft: Some(value),
            hard: Some(value),
        };
        let nproc = self
            .limits
            .max_processes
            .map_or(65536, |n| i64::try_from(n).unwrap_or(i64::MAX));
        let mut ulimits = vec![
            ulimit("nofile", NOFILE),
            ulimit("nproc", nproc),
            ulimit("core", 0),
        ];
        let fsize = self
            .limits
            .max_file_size
            .map_or(prepared.file_size_limit, |n| {
                n.min(prepared.file_size_limit)
            });
        if fsize < u64::MAX {
            ulimits.push(ulimit("fsize", i64::try_from(fsize).unwrap_or(i64::MAX)));
        }
        let memory = self
            .limits
            .max_memory
            .map(|m| i64::try_from(m).unwrap_or(i64::MAX));
        let host_config = HostConfig {
            mounts: Some(mounts),
            tmpfs: Some(tmpfs),
            readonly_rootfs: Some(true),
            network_mode: Some(self.network.clone()),
            cap_drop: Some(vec!["ALL".to_owned()]),
            security_opt: Some(vec!["no-new-privileges".to_owned()]),
            privileged: Some(false),
            memory,
            memory_swap: memory,
            pids_limit: self
                .limits
                .max_processes
                .map(|n| i64::try_from(n).unwrap_or(i64::MAX)),
            nano_cpus: self.cpus.map(|c| (c * 1e9) as i64),
            ulimits: Some(ulimits),
            init: Some(false),
            ipc_mode: Some("private".to_owned()),
            ..Default::default()
        };
        let (program, args) = &prepared.inner;
        // `sh` is the container's PID 1 and the command its child: the
        // kernel shields a PID 1 from its own signals, and a command must
        // be able to `kill -9 $$` itself as it can elsewhere. `; exit $?`
        // keeps `sh` from replacing itself with the command.
        let script = if stdin {
            "\"$@\" < \"$0\"; exit $?"
        } else {
            "\"$@\"; exit $?"
        };
        let mut cmd = Vec::with_capacity(args.len() + 5);
        cmd.extend(["/bin/sh".to_owned(), "-c".to_owned(), script.to_owned()]);
        cmd.push(if stdin {
            // The request's standard input, from the file the runtime wrote.
            ws_root
                .join(&prepared.run_dir)
                .join(STDIN_FILE)
                .display()
                .to_string()
        } else {
            "sh".to_owned()
        });
        cmd.push(program.display().to_string());
        for a in args {
            cmd.push(a.to_str().map(str::to_owned).ok_or_else(|| {
                WorkspaceError::new(
                    WorkspaceErrorKind::InvalidRequest,
                    "a command argument is not UTF-8",
                )
            })?);
        }
        let mut labels = HashMap::new();
        labels.insert(SESSION_LABEL.to_owned(), session.to_owned());
        labels.insert(RUNTIME_LABEL.to_owned(), self.instance.clone());
        Ok(ContainerCreateBody {
            image: Some(self.image.clone()),
            user: Some(format!("{}:{}", self.user.0, self.user.1)),
            hostname: Some(HOSTNAME.to_owned()),
            cmd: Some(cmd),
            entrypoint: Some(Vec::new()),
            env: Some(
                prepared
                    .env
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect(),
            ),
            working_dir: Some(prepared.cwd.display().to_string()),
            labels: Some(labels),
            network_disabled: Some(self.network == "none"),
            attach_stdout: Some(true),
            attach_stderr: Some(true),
            host_config: Some(host_config),
            ..Default::default()
        })
    }

    /// Runs a prepared command in a new container and removes it: output
    /// capped at `cap` bytes per stream, killed (the whole container) at
    /// `timeout`.
    pub(crate) async fn run(
        &self,
        session: &str,
        ws_root: &Path,
        prepared: &Prepared,
        stdin: bool,
        timeout: Duration,
        cap: usize,
    ) -> WorkspaceResult<Outcome> {
        let engine_err = |what: &str, e: bollard::errors::Error| {
            WorkspaceError::new(
                WorkspaceErrorKind::Spawn,
                format!("container engine at {}: {what}: {e}", self.host),
            )
        };
        let root = ws_root.to_path_buf();
        let mounts = crate::fsutil::blocking(move || checked_mounts(&root)).await?;
        let body = self.create_body(session, ws_root, prepared, stdin, mounts)?;
        let created = self
            .docker
            .create_container(None, body)
            .instrument(tracing::info_span!("workspace.container.create", image = %self.image))
            .await
            .map_err(|e| engine_err("creating the container", e))?;
        let id = created.id;
        // From here on the container is removed whatever happens, also
        // when this future is dropped.
        let mut guard = RemoveOnDrop {
            docker: Some(self.docker.clone()),
            id: id.clone(),
        };
        let attach = self
            .docker
            .attach_container(
                &id,
                Some(
                    AttachContainerOptionsBuilder::default()
                        .stream(true)
                        .stdout(true)
                        .stderr(true)
                        .logs(false)
                        .build(),
                ),
            )
            .await
            .map_err(|e| engine_err("attaching to the container", e))?;
        let started = Instant::now();
        self.docker
            .start_container(&id, None)
            .instrument(tracing::info_span!("workspace.container.start", id = %short(&id)))
            .await
            .map_err(|e| engine_err("starting the container", e))?;
        let mut out = Captured::new(cap);
        let mut err = Captured::new(cap);
        let mut output = attach.output;
        let read = async {
            while let Some(item) = output.next().await {
                match item {
                    Ok(LogOutput::StdOut { message } | LogOutput::Console { message }) => {
                        out.push(&message);
                    }
                    Ok(LogOutput::StdErr { message }) => err.push(&message),
                    Ok(LogOutput::StdIn { .. }) => {}
                    Err(_) => break,
                }
            }
        };
        // The time limit covers the output and the exit: a command that
        // closes its output and keeps running is still killed on time.
        let mut warnings = Vec::new();
        let ran = tokio::time::timeout(timeout, async {
            read.await;
            self.exit_code(&id, &mut warnings).await
        })
        .await;
        let (exit_code, timed_out) = match ran {
            Ok(code) => (code, false),
            Err(_) => {
                // One kill ends every process of the run.
                let kill = KillContainerOptionsBuilder::default()
                    .signal("SIGKILL")
                    .build();
                if let Err(e) = self.docker.kill_container(&id, Some(kill)).await {
                    tracing::debug!("kill after timeout: {e}");
                }
                (None, true)
            }
        };
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        remove(&self.docker, &id)
            .instrument(tracing::info_span!("workspace.container.remove", id = %short(&id)))
            .await;
        // Removed: nothing left for the guard.
        guard.docker = None;
        let (stdout, stdout_cut) = out.into_text();
        let (stderr, stderr_cut) = err.into_text();
        Ok(Outcome {
            stdout,
            stderr,
            stdout_cut,
            stderr_cut,
            exit_code,
            timed_out,
            duration_ms,
            warnings,
        })
    }

    /// The container's exit code once it has stopped (its output ended),
    /// with a warning when the engine says it ran out of memory.
    async fn exit_code(&self, id: &str, warnings: &mut Vec<String>) -> Option<i32> {
        let wait = WaitContainerOptionsBuilder::default()
            .condition("not-running")
            .build();
        let code = match self.docker.wait_container(id, Some(wait)).next().await {
            Some(Ok(r)) => Some(r.status_code),
            Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => Some(code),
            Some(Err(e)) => {
                warnings.push(format!("the engine did not report the exit code: {e}"));
                None
            }
            None => None,
        };
        if let (Some(code), Some(limit)) = (code, self.limits.max_memory) {
            let oom = code != 0
                && self
                    .docker
                    .inspect_container(id, None)
                    .await
                    .ok()
                    .and_then(|info| info.state.and_then(|s| s.oom_killed))
                    == Some(true);
            if oom {
                warnings.push(format!(
                    "the run was killed for passing its memory limit ({limit} bytes)"
                ));
            } else if code == 137 {
                // The engine reports an out-of-memory kill only for the
                // container's first process; a command's is a SIGKILL.
                warnings.push(format!(
                    "a process of the run was killed (SIGKILL); if nothing else killed it, it \
                     passed the run's memory limit ({limit} bytes)"
                ));
            }
        }
        code.map(|c| i32::try_from(c).unwrap_or(i32::MAX))
    }
}

/// The bind mounts of a run in the workspace at `ws_root`: the session
/// folder, its `skills/` read-only and each staged skill's `.venv/`, each
/// checked to be a real folder, not a link, before the engine (root) is
/// asked to mount it (rule C7). Blocking.
fn checked_mounts(ws_root: &Path) -> WorkspaceResult<Vec<Mount>> {
    let skills = ws_root.join(SKILLS_SUBDIR);
    for dir in [ws_root, skills.as_path()] {
        let real = std::fs::symlink_metadata(dir).is_ok_and(|m| m.is_dir());
        if !real {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::PathEscape,
                format!(
                    "{} is no longer a folder of the workspace; refusing to mount it",
                    dir.display()
                ),
            ));
        }
    }
    let bind = |source: &Path, read_only: bool| Mount {
        target: Some(source.display().to_string()),
        source: Some(source.display().to_string()),
        typ: Some(MountType::BIND),
        read_only: Some(read_only),
        bind_options: Some(MountBindOptions {
            propagation: Some(bollard::models::MountBindOptionsPropagationEnum::RPRIVATE),
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut mounts = vec![bind(ws_root, false), bind(&skills, true)];
    // `venvs` lists real folders only (`symlink_metadata`), inside the
    // read-only `skills/`, which no command can change.
    for (venv, _) in crate::supervisor::venvs(ws_root) {
        mounts.push(bind(&venv, false));
    }
    Ok(mounts)
}

/// The first 12 characters of a container id, for spans.
fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

/// Force-removes a container (killing what still runs in it).
async fn remove(docker: &Docker, id: &str) {
    let opts = RemoveContainerOptionsBuilder::default()
        .force(true)
        .v(true)
        .build();
    if let Err(e) = docker.remove_container(id, Some(opts)).await {
        tracing::warn!("removing container {}: {e}", short(id));
    }
}

/// Removes a run's container when its future is dropped before it did.
struct RemoveOnDrop {
    docker: Option<Docker>,
    id: String,
}

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(docker) = self.docker.take()
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            let id = std::mem::take(&mut self.id);
            drop(handle.spawn(async move { remove(&docker, &id).await }));
        }
    }
}

/// Shared handle on the engine, for the launcher enum.
pub(crate) type SharedContainers = Arc<Containers>;
