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
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bollard::Docker;
use bollard::container::LogOutput;
use bollard::models::{
    ContainerCreateBody, ContainerStateStatusEnum, HostConfig, HostConfigLogConfig, Mount,
    MountBindOptions, MountType, ResourcesUlimits,
};
use bollard::query_parameters::{
    AttachContainerOptionsBuilder, CreateContainerOptionsBuilder, KillContainerOptionsBuilder,
    ListContainersOptionsBuilder, RemoveContainerOptionsBuilder, WaitContainerOptionsBuilder,
};
use futures_util::StreamExt;
use skills_workspace::{SKILLS_SUBDIR, WorkspaceError, WorkspaceErrorKind, WorkspaceResult};
use tracing::Instrument;

use crate::capture::Captured;
use crate::engine::{Outcome, Prepared, Ws};
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

/// The request timeout of the engine's `wait` (the run's own timeout
/// bounds it).
const WAIT_TIMEOUT: Duration = Duration::from_secs(7 * 24 * 3600);

/// Open files per process in a container.
const NOFILE: i64 = 4096;

/// The `nproc` limit of a container: high, since it counts the user's
/// processes on the whole host (a run's are bounded by `pids`), and no
/// higher than an engine's own limit usually is (runc cannot raise it).
const NPROC: i64 = 16384;

/// How long after its timeout a run's container kills itself, should the
/// runtime be gone (killed, or its tokio runtime shut down) before it
/// could.
const SELF_KILL_GRACE: Duration = Duration::from_secs(30);

/// The name of the file `sh` writes the exit code into, in the run folder.
pub(crate) const STATUS_FILE: &str = ".exit_status";

/// The name of the standard-input file in the run folder.
pub(crate) const STDIN_FILE: &str = ".stdin";

/// Where the engine is and what the containers look like (see
/// [`RuntimeBuilder::build_container`](crate::RuntimeBuilder::build_container)).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ContainerOptions {
    /// The engine's socket (`unix:///run/podman/podman.sock`); `None`:
    /// `DOCKER_HOST`, else the first of [`SOCKET_PATHS`] (and a rootless
    /// Podman's socket) that exists. Only a Unix socket: the engine mounts
    /// folders of its own host, which must be this one.
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

    /// Sets the engine's socket (`unix:///path`).
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
    /// Runs started, for container names.
    runs: AtomicU64,
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
        // The engine mounts folders of its own host: it must be this one.
        if !host.starts_with("unix://") {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::InvalidRequest,
                format!(
                    "the container engine must run on this host and be reached through its Unix \
                     socket (unix:///…), not {host}: the runtime mounts this host's workspace \
                     folders into the containers"
                ),
            ));
        }
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
            runs: AtomicU64::new(0),
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

    /// Kills and removes every container of `session` this runtime
    /// started (runs still going when the session is cleaned up).
    pub(crate) async fn remove_session(&self, session: &str) {
        let mut filters = HashMap::new();
        filters.insert(
            "label".to_owned(),
            vec![
                format!("{SESSION_LABEL}={session}"),
                format!("{RUNTIME_LABEL}={}", self.instance),
            ],
        );
        let list = ListContainersOptionsBuilder::default()
            .all(true)
            .filters(&filters)
            .build();
        match self.docker.list_containers(Some(list)).await {
            Ok(found) => {
                for c in found {
                    if let Some(id) = c.id {
                        remove(&self.docker, &id).await;
                    }
                }
            }
            Err(e) => tracing::warn!("listing the containers of session {session}: {e}"),
        }
    }

    /// The container of one run, with `mounts` (see [`checked_mounts`]).
    fn create_body(
        &self,
        session: &str,
        ws_root: &Path,
        prepared: &Prepared,
        stdin: bool,
        timeout: Duration,
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
        // `nproc` counts every process of the user on the whole host (a
        // rootful engine adds no user namespace): a per-run value there
        // would let one session starve the others. Processes are bounded by
        // the `pids` cgroup; runc only needs `nproc` to be set.
        let mut ulimits = vec![
            ulimit("nofile", NOFILE),
            ulimit("nproc", NPROC),
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
            // Output reaches the runtime through the attach stream only: an
            // engine log would keep every byte on the host's disk.
            log_config: Some(HostConfigLogConfig {
                typ: Some("none".to_owned()),
                config: None,
            }),
            ..Default::default()
        };
        let (program, args) = &prepared.inner;
        // `sh` is the container's PID 1 and the command its child: the
        // kernel shields a PID 1 from its own signals, and a command must
        // be able to `kill -9 $$` itself as it can elsewhere. `; exit $?`
        // keeps `sh` from replacing itself with the command. A background
        // `sleep` kills everything (C6) should the runtime be gone before
        // the run's deadline; normally the runtime kills first.
        // The exit code goes into a file of the run folder too: the
        // runtime reads it when the output ends, without waiting for the
        // engine to notice the exit (Podman answers a `wait` up to a second
        // late). A command can only make it lie about its own exit code.
        let deadline = (timeout + SELF_KILL_GRACE).as_secs();
        let script = format!(
            "i=$1; shift; (sleep {deadline}; kill -9 -1) >/dev/null 2>&1 & \
             if [ \"$i\" = - ]; then \"$@\"; else \"$@\" < \"$i\"; fi; \
             c=$?; echo \"$c\" > \"$0\"; exit \"$c\""
        );
        let run_dir = ws_root.join(&prepared.run_dir);
        let mut cmd = Vec::with_capacity(args.len() + 3);
        cmd.push(run_dir.join(STATUS_FILE).display().to_string());
        cmd.push(if stdin {
            // The request's standard input, from the file the runtime wrote.
            run_dir.join(STDIN_FILE).display().to_string()
        } else {
            "-".to_owned()
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
            // The whole command line is set (an image's own entry point
            // never runs).
            entrypoint: Some(vec!["/bin/sh".to_owned(), "-c".to_owned(), script]),
            cmd: Some(cmd),
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
        ws: &Arc<Ws>,
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
        let (session, ws_root) = (ws.session_id.as_str(), ws.root.as_path());
        let root = ws_root.to_path_buf();
        let mounts = crate::fsutil::blocking(move || checked_mounts(&root)).await?;
        let body = self.create_body(session, ws_root, prepared, stdin, timeout, mounts)?;
        // Named before it exists, so that it is removed whatever happens
        // from here on, also when this future is dropped while the engine
        // creates it.
        let name = format!(
            "skills-{}-{}",
            self.instance,
            self.runs.fetch_add(1, Ordering::Relaxed)
        );
        let mut guard = RemoveOnDrop {
            docker: Some(self.docker.clone()),
            id: name.clone(),
        };
        let create = CreateContainerOptionsBuilder::default().name(&name).build();
        self.docker
            .create_container(Some(create), body)
            .instrument(tracing::info_span!("workspace.container.create", image = %self.image))
            .await
            .map_err(|e| engine_err("creating the container", e))?;
        let id = name;
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
            .instrument(tracing::info_span!("workspace.container.attach", id = %short(&id)))
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
            let (code, oom) = match self.status_file(ws, &prepared.run_dir).await {
                Some(code) => (Some(code), false),
                None => self.exit_code(&id, &mut warnings).await,
            };
            if let Some(note) = self.memory_note(code, oom) {
                warnings.push(note);
            }
            code
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
        if remove(&self.docker, &id)
            .instrument(tracing::info_span!("workspace.container.remove", id = %short(&id)))
            .await
        {
            // Removed: nothing left for the guard (which tries again
            // otherwise).
            guard.docker = None;
        }
        let mut outcome = Outcome::new(Some(out), Some(err), exit_code, timed_out, duration_ms);
        outcome.warnings = warnings;
        Ok(outcome)
    }

    /// The exit code `sh` wrote into the run folder, read beneath the
    /// workspace (H3); `None` when there is none to read.
    async fn status_file(&self, ws: &Arc<Ws>, run_dir: &str) -> Option<i32> {
        let (w, run_dir, owner) = (Arc::clone(ws), run_dir.to_owned(), self.user.0);
        crate::fsutil::blocking(move || {
            let read = w
                .dir
                .walk(&run_dir)
                .and_then(|d| d.read_beneath(STATUS_FILE, 16, &[owner]));
            Ok(match read {
                Ok(crate::fsutil::Opened::File { bytes, .. }) => std::str::from_utf8(&bytes)
                    .ok()
                    .and_then(|t| t.trim().parse().ok()),
                _ => None,
            })
        })
        .await
        .ok()
        .flatten()
    }

    /// The container's exit code once it has stopped (its output ended,
    /// and `sh` left no status file), and whether the engine says it ran
    /// out of memory.
    async fn exit_code(&self, id: &str, warnings: &mut Vec<String>) -> (Option<i32>, bool) {
        // The output ended: the container has normally stopped already,
        // and one look says so (an engine's `wait` may poll: Podman 4.3
        // answers it 0.25 to 1 s late). Else wait for it.
        let state = self
            .docker
            .inspect_container(id, None)
            .instrument(tracing::info_span!("workspace.container.inspect", id = %short(id)))
            .await
            .ok()
            .and_then(|info| info.state);
        let stopped = state.as_ref().filter(|s| {
            s.running == Some(false) && s.status != Some(ContainerStateStatusEnum::CREATED)
        });
        let mut oom = stopped.and_then(|s| s.oom_killed) == Some(true);
        let code = match stopped.and_then(|s| s.exit_code) {
            Some(code) => Some(code),
            None => self.wait_exit(id, warnings).await,
        };
        if code.is_some_and(|c| c != 0) && stopped.is_none() {
            oom = self
                .docker
                .inspect_container(id, None)
                .await
                .ok()
                .and_then(|info| info.state.and_then(|s| s.oom_killed))
                == Some(true);
        }
        (code.map(|c| i32::try_from(c).unwrap_or(i32::MAX)), oom)
    }

    /// The warning a run gets when it was, or may have been, killed for
    /// passing its memory limit: `oom` when the engine says so, else a
    /// `SIGKILL` (137) under a memory limit (the engine reports an
    /// out-of-memory kill only for the container's first process).
    fn memory_note(&self, code: Option<i32>, oom: bool) -> Option<String> {
        let limit = self.limits.max_memory?;
        if oom {
            Some(format!(
                "the run was killed for passing its memory limit ({limit} bytes)"
            ))
        } else if code == Some(137) {
            Some(format!(
                "a process of the run was killed (SIGKILL); if nothing else killed it, it \
                 passed the run's memory limit ({limit} bytes)"
            ))
        } else {
            None
        }
    }

    /// The exit code from the engine's `wait`, once the container stopped.
    async fn wait_exit(&self, id: &str, warnings: &mut Vec<String>) -> Option<i64> {
        let wait = WaitContainerOptionsBuilder::default()
            .condition("not-running")
            .build();
        // The engine's answer comes when the container stops: no request
        // timeout (the run's own covers it).
        let waiter = self.docker.clone().with_timeout(WAIT_TIMEOUT);
        match waiter
            .wait_container(id, Some(wait))
            .next()
            .instrument(tracing::info_span!("workspace.container.wait", id = %short(id)))
            .await
        {
            Some(Ok(r)) => Some(r.status_code),
            Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => Some(code),
            Some(Err(e)) => {
                warnings.push(format!("the engine did not report the exit code: {e}"));
                None
            }
            None => None,
        }
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
    // Inside the read-only `skills/`, which no command can change; each
    // step checked all the same: the skill's folder and its `.venv/` are
    // real folders.
    for (venv, _) in crate::supervisor::venvs(ws_root) {
        let skill_dir_real = venv
            .parent()
            .and_then(|d| std::fs::symlink_metadata(d).ok())
            .is_some_and(|m| m.is_dir());
        if skill_dir_real {
            mounts.push(bind(&venv, false));
        }
    }
    Ok(mounts)
}

/// The first 12 characters of a container id, for spans.
fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

/// Force-removes a container (killing what still runs in it); `true` when
/// it is gone (removed, or never created).
async fn remove(docker: &Docker, id: &str) -> bool {
    let opts = RemoveContainerOptionsBuilder::default()
        .force(true)
        .v(true)
        .build();
    match docker.remove_container(id, Some(opts)).await {
        Ok(()) => true,
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 404, ..
        }) => true,
        Err(e) => {
            tracing::warn!("removing container {}: {e}", short(id));
            false
        }
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
            drop(handle.spawn(async move {
                // Once more after a while when the engine was still
                // creating it.
                if !remove(&docker, &id).await {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    remove(&docker, &id).await;
                }
            }));
        }
    }
}

/// Shared handle on the engine, for the launcher enum.
pub(crate) type SharedContainers = Arc<Containers>;
