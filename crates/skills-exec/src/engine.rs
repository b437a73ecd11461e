//! The runtime engine shared by [`LocalRuntime`](crate::LocalRuntime) and
//! [`SandboxRuntime`](crate::SandboxRuntime): workspaces, staging, runs,
//! outputs and cleanup. The two differ only in how a process is launched.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dashmap::DashMap;
use skills_core::SkillProvider;
use skills_workspace::{
    CleanupReport, CommandSpec, DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_FILES, DEFAULT_MAX_TOTAL_BYTES,
    ENV_OUTPUT_DIR, ENV_RUN_DIR, ENV_SKILL_NAME, ENV_SKILLS_DIR, ENV_WORK_DIR, ENV_WORKSPACE_DIR,
    OUTPUT_SUBDIR, RunIo, RunRequest, RunResult, SKILLS_SUBDIR, SavedArtifact, SkillSource,
    StagedSkill, WORK_SUBDIR, WORKSPACE_SCHEME, WorkspaceError, WorkspaceErrorKind, WorkspaceFile,
    WorkspaceInfo, WorkspaceResult, normalize_output_glob, normalize_relative, resolve_cwd,
    validate_session_id,
};
use tokio::io::AsyncWriteExt;
use tracing::Instrument;

use crate::artifact::ArtifactService;
use crate::capture::read_capped;
use crate::child::Running;
use crate::collect::{CollectSpec, collect, sniff};
use crate::exec::ExecSession;
use crate::fsutil::{DirHandle, Opened, Owner, blocking, euid, io_error, is_within, join_rel};
use crate::kill::{RUN_MARKER_VAR, SESSION_MARKER_VAR, group_alive, kill_group, sweep, sweep_in};
use crate::limits::RunCgroup;
use crate::policy::{CommandPolicy, is_risky_env_var};
use crate::quota::{self, Usage, WorkspaceLimits};
use crate::rundir::{EDITOR_SCRIPT, EDITOR_TEXT, RunDirs};
use crate::sandbox::Sandbox;
use crate::stage;
use std::os::fd::OwnedFd;

/// Where bash is looked for (fixed paths, never `PATH`).
const BASH_PATHS: [&str; 2] = ["/bin/bash", "/usr/bin/bash"];
/// Where `setsid` (util-linux) is looked for; it gives terminal sessions their
/// controlling terminal without any `unsafe` code here.
const SETSID_PATHS: [&str; 2] = ["/usr/bin/setsid", "/bin/setsid"];
/// How long to wait for output pipes after the command exited before
/// sweeping for processes that still hold them.
const PIPE_GRACE: Duration = Duration::from_millis(100);

/// How processes are started.
#[derive(Debug, Clone)]
pub(crate) enum Launcher {
    /// Directly on the host.
    Local,
    /// Inside bubblewrap.
    Sandbox(Box<Sandbox>),
    /// In a container of its own, on a container engine.
    #[cfg(feature = "container")]
    Container(crate::container::SharedContainers),
}

/// The engine's configuration (see [`RuntimeBuilder`](crate::RuntimeBuilder)).
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub(crate) root: PathBuf,
    pub(crate) launcher: Launcher,
    pub(crate) policy: CommandPolicy,
    pub(crate) default_timeout: Duration,
    pub(crate) max_timeout: Duration,
    pub(crate) output_cap: usize,
    pub(crate) artifacts: Option<Arc<dyn ArtifactService>>,
    /// Save every collected file, whatever the request asks.
    pub(crate) force_save_artifacts: bool,
    pub(crate) provider: Option<Arc<dyn SkillProvider>>,
    pub(crate) host_input_roots: Vec<PathBuf>,
    pub(crate) bash: PathBuf,
    /// A handle on `root` (checked private, threat model H1).
    pub(crate) root_dir: Arc<DirHandle>,
    /// Who gets the folders a command may write (H6): the sandbox's
    /// unprivileged host user when the sandbox runs as root, else `None`
    /// (contract with the sandbox side: it sets this, the workspace code
    /// applies it).
    pub(crate) sandbox_owner: Option<Owner>,
    /// Disk, output and interactive-session caps (H7, H8, H9).
    pub(crate) limits: WorkspaceLimits,
    /// How runs are bounded (the sandbox holds the same).
    pub(crate) enforcement: Arc<crate::limits::Enforcement>,
}

/// The normalized globs of the files `io` asks to collect (`output_files`
/// and the manifest's), checked before anything runs.
pub(crate) fn output_globs(io: &RunIo) -> WorkspaceResult<Vec<String>> {
    io.output_files
        .iter()
        .chain(io.outputs.iter().flat_map(|o| o.globs.iter()))
        .map(|g| normalize_output_glob(g))
        .collect()
}

/// Finds bash at a fixed path.
pub(crate) fn find_bash() -> WorkspaceResult<PathBuf> {
    BASH_PATHS
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .ok_or_else(|| {
            WorkspaceError::new(
                WorkspaceErrorKind::Unavailable,
                "bash not found at /bin/bash or /usr/bin/bash",
            )
        })
}

#[derive(Debug, Clone)]
pub(crate) struct StagedState {
    fingerprint: String,
    digest: String,
}

/// One live workspace.
#[derive(Debug)]
pub(crate) struct Ws {
    pub(crate) session_id: String,
    pub(crate) root: PathBuf,
    /// A handle on the session folder: every file operation of the runtime
    /// inside the workspace goes through it (H2, H3).
    pub(crate) dir: DirHandle,
    /// What the workspace held at its last measurement (H7), and a lock
    /// so one measurement runs at a time.
    pub(crate) usage: Mutex<Usage>,
    measuring: tokio::sync::Mutex<()>,
    /// Interactive sessions running now (H9).
    pub(crate) live_execs: Arc<AtomicUsize>,
    marker: String,
    pub(crate) skills: Mutex<HashMap<String, StagedState>>,
    stage_lock: tokio::sync::Mutex<()>,
    pub(crate) pinned: Mutex<HashMap<String, u64>>,
    pub(crate) execs: DashMap<String, Arc<ExecSession>>,
    /// The workspace's long-lived sandbox (sandbox runtime only).
    #[cfg(unix)]
    supervisor: Mutex<Option<Arc<crate::supervisor::Supervisor>>>,
    /// Held while a supervisor starts, so runs arriving together start one.
    #[cfg(unix)]
    supervisor_start: tokio::sync::Mutex<()>,
    /// The run folders: the next run's, made ahead of time, and the
    /// finished runs' to tidy.
    pub(crate) run_dirs: RunDirs,
}

/// The engine.
#[derive(Debug)]
pub(crate) struct Engine {
    pub(crate) cfg: Config,
    pub(crate) name: &'static str,
    workspaces: DashMap<String, Arc<Ws>>,
    /// Interactive sessions running now in all workspaces (H9).
    pub(crate) live_execs: Arc<AtomicUsize>,
}

static RUN_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A process-unique id for markers and exec sessions.
pub(crate) fn unique_id() -> String {
    let n = RUN_COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{}-{n}-{nanos:x}", std::process::id())
}

/// What to launch: the request's [`CommandSpec`] and the parts of a run or
/// exec request beyond it that shape the process.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Launch<'a> {
    pub(crate) spec: &'a CommandSpec,
    pub(crate) editor_text: Option<&'a str>,
    pub(crate) tty: bool,
}

/// A prepared command: what to spawn, where, with which environment.
#[derive(Debug)]
pub(crate) struct Prepared {
    /// The program (for messages).
    pub(crate) program: PathBuf,
    /// The command itself, before any `bwrap` wrapping.
    pub(crate) inner: CommandLine,
    pub(crate) env: BTreeMap<String, String>,
    pub(crate) cwd: PathBuf,
    pub(crate) run_dir: String,
    pub(crate) marker: String,
    pub(crate) warnings: Vec<String>,
    /// The largest file the command may write: what is left of the
    /// workspace's disk cap (H7). The sandbox applies it as `RLIMIT_FSIZE`
    /// (S6).
    pub(crate) file_size_limit: u64,
    /// The editor files made in the run folder, removed after the run.
    pub(crate) editor: bool,
}

impl Prepared {
    /// The workspace folder of the run.
    pub(crate) fn workspace_root(&self) -> Option<&Path> {
        self.env.get(ENV_WORKSPACE_DIR).map(Path::new)
    }
}

impl Engine {
    pub(crate) fn new(cfg: Config, name: &'static str) -> Self {
        Self {
            cfg,
            name,
            workspaces: DashMap::new(),
            live_execs: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// The session's workspace, created on first use.
    pub(crate) async fn workspace(&self, session_id: &str) -> WorkspaceResult<(Arc<Ws>, bool)> {
        validate_session_id(session_id)?;
        if let Some(ws) = self.workspaces.get(session_id) {
            return Ok((Arc::clone(ws.value()), false));
        }
        let root = self.cfg.root.join(session_id);
        let (sid, owner) = (session_id.to_owned(), self.cfg.sandbox_owner);
        let root_dir = Arc::clone(&self.cfg.root_dir);
        let (dir, created) = blocking(move || stage::create_layout(&root_dir, &sid, owner))
            .instrument(tracing::info_span!(
                "workspace.create",
                session = session_id,
                runtime = self.name
            ))
            .await?;
        let ws = Arc::new(Ws {
            session_id: session_id.to_owned(),
            marker: format!("{SESSION_MARKER_VAR}={}", unique_id()),
            root,
            dir,
            usage: Mutex::new(Usage::default()),
            measuring: tokio::sync::Mutex::new(()),
            live_execs: Arc::new(AtomicUsize::new(0)),
            skills: Mutex::new(HashMap::new()),
            stage_lock: tokio::sync::Mutex::new(()),
            pinned: Mutex::new(HashMap::new()),
            execs: DashMap::new(),
            #[cfg(unix)]
            supervisor: Mutex::new(None),
            #[cfg(unix)]
            supervisor_start: tokio::sync::Mutex::new(()),
            run_dirs: RunDirs::default(),
        });
        let entry = self
            .workspaces
            .entry(session_id.to_owned())
            .or_insert(ws)
            .clone();
        Ok((entry, created))
    }

    pub(crate) async fn create_workspace(
        &self,
        session_id: &str,
    ) -> WorkspaceResult<WorkspaceInfo> {
        let (ws, created) = self.workspace(session_id).await?;
        Ok(WorkspaceInfo::new(
            session_id,
            ws.root.display().to_string(),
            created,
        ))
    }

    pub(crate) async fn stage_skill(
        &self,
        session_id: &str,
        skill: &SkillSource,
    ) -> WorkspaceResult<StagedSkill> {
        let (ws, _) = self.workspace(session_id).await?;
        let name = skill.name().to_owned();
        stage::check_skill_name(&name)?;
        let span =
            tracing::info_span!("workspace.stage.skill", session = session_id, skill = %name);
        let _guard = ws.stage_lock.lock().await;
        self.check_disk(&ws, "staging refused").await?;
        let previous = lock(&ws.skills).get(&name).cloned();
        let source = skill.clone();
        let w = Arc::clone(&ws);
        let (limits, venv_owner) = (self.cfg.limits, self.cfg.sandbox_owner);
        let n = name.clone();
        let (state, copied, warnings) = blocking(move || {
            let listed = match &source {
                SkillSource::Folder { path, .. } => stage::list_folder(Path::new(path))?,
                SkillSource::Files { files, digest, .. } => {
                    stage::list_files(files, digest.as_deref())?
                }
                _ => {
                    return Err(WorkspaceError::new(
                        WorkspaceErrorKind::Unsupported,
                        "unknown skill source",
                    ));
                }
            };
            let skills = w
                .dir
                .try_clone()
                .map_err(|e| io_error("session folder", e))?
                .with_owner(None)
                .ensure_dir(SKILLS_SUBDIR)
                .map_err(|e| crate::fsutil::walk_error(&format!("{SKILLS_SUBDIR}/"), e))?;
            let present = skills
                .stat_at(&n)
                .map_err(|e| io_error("skills folder", e))?
                .is_some_and(|m| m.is_dir());
            if let Some(prev) = &previous
                && present
                && prev.fingerprint == listed.fingerprint
            {
                return Ok((prev.clone(), false, listed.warnings));
            }
            let digest = stage::content_digest(&listed)?;
            let state = StagedState {
                fingerprint: listed.fingerprint.clone(),
                digest: digest.clone(),
            };
            if let Some(prev) = &previous
                && present
                && prev.digest == digest
            {
                return Ok((state, false, listed.warnings));
            }
            let (bytes, files) = stage::listed_size(&listed);
            let usage = *lock(&w.usage);
            if bytes > usage.bytes_left(&limits) || files > usage.files_left(&limits) {
                return Err(WorkspaceError::new(
                    WorkspaceErrorKind::LimitExceeded,
                    format!(
                        "skill `{n}` ({bytes} bytes in {files} files) does not fit in what is \
                         left of the workspace's disk cap ({} bytes, {} files; threat model H7)",
                        usage.bytes_left(&limits),
                        usage.files_left(&limits)
                    ),
                ));
            }
            stage::copy_skill(&skills, &n, &listed, venv_owner)?;
            lock(&w.usage).add(bytes, files);
            Ok((state, true, listed.warnings))
        })
        .instrument(span)
        .await?;
        for w in &warnings {
            tracing::warn!(skill = %name, "{w}");
        }
        let digest = state.digest.clone();
        lock(&ws.skills).insert(name.clone(), state);
        Ok(StagedSkill::new(name, digest, copied))
    }

    /// Makes sure `skill` is staged, staging it from the provider when one is
    /// configured.
    pub(crate) async fn ensure_staged(
        &self,
        session_id: &str,
        ws: &Ws,
        skill: &str,
    ) -> WorkspaceResult<()> {
        stage::check_skill_name(skill)?;
        if lock(&ws.skills).contains_key(skill) {
            return Ok(());
        }
        let Some(provider) = &self.cfg.provider else {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::SkillNotLoaded,
                format!(
                    "skill `{skill}` is not loaded in this session; load (stage) it before running it"
                ),
            ));
        };
        let loaded = provider
            .get(skill)
            .await
            .map_err(|e| WorkspaceError::new(WorkspaceErrorKind::NotFound, e.to_string()))?;
        let Some(source) = SkillSource::from_skill_location(&loaded) else {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::Unsupported,
                format!("skill `{skill}` has no local folder to stage; stage its files explicitly"),
            ));
        };
        self.stage_skill(session_id, &source).await.map(|_| ())
    }

    /// Resolves cwd, environment and program for a command in `skill`.
    pub(crate) async fn prepare(
        &self,
        ws: &Arc<Ws>,
        launch: Launch<'_>,
    ) -> WorkspaceResult<Prepared> {
        let Launch {
            spec,
            editor_text,
            tty,
        } = launch;
        let skill = spec.skill.as_str();
        let command = spec.command.as_str();
        let cwd = spec.cwd.as_deref();
        let env = &spec.env;
        if command.trim().is_empty() {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::InvalidRequest,
                "empty command",
            ));
        }
        let root = ws.root.clone();
        // One trip to the blocking pool: the run folder, the checked working
        // folder and the editor helper.
        let restricted = self.cfg.policy.is_restricted();
        let (run_dir, host_cwd, editor_script, (program, _), inner) = {
            let r = root.clone();
            let cfg = self.cfg.clone();
            let command = command.to_owned();
            let cwd = cwd.map(str::to_owned);
            let skill = skill.to_owned();
            let editor_text = editor_text.map(str::to_owned);
            let w = Arc::clone(ws);
            blocking(move || {
                let run_dir = w.run_dirs.take(&w.dir)?;
                let rel = resolve_cwd(cwd.as_deref(), &skill, &run_dir, &r.display().to_string())?;
                let canonical = join_rel(&r, &rel).canonicalize().map_err(|e| {
                    WorkspaceError::new(WorkspaceErrorKind::NotFound, format!("cwd {rel:?}: {e}"))
                })?;
                let canonical_root = r
                    .canonicalize()
                    .map_err(|e| io_error("workspace root", e))?;
                if !is_within(&canonical_root, &canonical) {
                    return Err(WorkspaceError::new(
                        WorkspaceErrorKind::PathEscape,
                        format!("cwd {rel:?} leads out of the workspace through a link"),
                    ));
                }
                if !canonical.is_dir() {
                    return Err(WorkspaceError::new(
                        WorkspaceErrorKind::InvalidRequest,
                        format!("cwd {rel:?} is not a folder"),
                    ));
                }
                let script = match editor_text {
                    Some(text) => Some(write_editor(&w.dir, &r, &run_dir, &text)?),
                    None => None,
                };
                let lines = command_line(&cfg, &r, &canonical, &command, restricted, tty)?;
                Ok((run_dir, canonical, script, lines.0, lines.1))
            })
            .await?
        };
        let mut warnings = Vec::new();
        let marker_value = unique_id();
        let marker = format!("{RUN_MARKER_VAR}={marker_value}");
        let mut vars = self.base_env(&root, skill, &run_dir);
        for (k, v) in env {
            if k.is_empty() || k.contains(['=', '\0']) || v.contains('\0') {
                warnings.push(format!(
                    "dropped environment variable {k:?}: invalid name or value"
                ));
            } else if is_protected(k) {
                warnings.push(format!(
                    "dropped environment variable {k}: set by the workspace"
                ));
            } else if restricted && is_risky_env_var(k) {
                warnings.push(format!(
                    "dropped environment variable {k}: not allowed under the command policy"
                ));
            } else {
                vars.insert(k.clone(), v.clone());
            }
        }
        // A request that names its locale with `LANG` alone gets that
        // locale's encoding too, not the default's.
        // (The overlay never sets `LANG`: here it is the request's.)
        if vars.contains_key("LANG") && !env.contains_key(UTF8_CATEGORY) {
            vars.remove(UTF8_CATEGORY);
        }
        let editor = editor_script.is_some();
        if let Some(script) = editor_script {
            let s = script.display().to_string();
            for k in ["EDITOR", "VISUAL", "GIT_EDITOR"] {
                vars.insert(k.to_owned(), s.clone());
            }
        }
        if let Some((k, v)) = marker.split_once('=') {
            vars.insert(k.to_owned(), v.to_owned());
        }
        if let Some((k, v)) = ws.marker.split_once('=') {
            vars.insert(k.to_owned(), v.to_owned());
        }
        Ok(Prepared {
            program,
            inner,
            env: vars,
            cwd: host_cwd,
            run_dir,
            marker,
            warnings,
            file_size_limit: lock(&ws.usage).file_size_limit(&self.cfg.limits),
            editor,
        })
    }

    fn base_env(&self, root: &Path, skill: &str, run_dir: &str) -> BTreeMap<String, String> {
        let mut env = BTreeMap::new();
        let host = |k: &str| std::env::var(k).ok();
        match &self.cfg.launcher {
            Launcher::Local => {
                env.insert(
                    "PATH".into(),
                    host("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into()),
                );
                for k in ["HOME", "USER", "LOGNAME", "TMPDIR"] {
                    if let Some(v) = host(k) {
                        env.insert(k.into(), v);
                    }
                }
            }
            Launcher::Sandbox(sb) => {
                env.insert("PATH".into(), sb.path_var().to_owned());
                env.insert("HOME".into(), root.join(WORK_SUBDIR).display().to_string());
                env.insert("TMPDIR".into(), "/tmp".into());
            }
            #[cfg(feature = "container")]
            Launcher::Container(_) => {
                env.insert("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into());
                env.insert("HOME".into(), root.join(WORK_SUBDIR).display().to_string());
                env.insert("TMPDIR".into(), "/tmp".into());
            }
        }
        for (k, v) in [
            ("NO_COLOR", "1"),
            ("CLICOLOR", "0"),
            ("TERM", "dumb"),
            ("PAGER", "cat"),
            ("GIT_PAGER", "cat"),
            ("MANPAGER", "cat"),
            ("SYSTEMD_PAGER", "cat"),
            ("LESS", "FRX"),
            // UTF-8 by default, through the one category that sets the
            // encoding (as Python's locale coercion does). Not `LANG` or
            // `LC_ALL`: bash then loads every category of the locale at
            // start (0.1 to 0.3 ms per run here), and in `C.UTF-8` every
            // other category is `C` anyway. A request's `LANG` replaces it
            // (see `prepare`); its `LC_ALL` wins over it.
            (UTF8_CATEGORY, "C.UTF-8"),
            ("PYTHONUNBUFFERED", "1"),
            ("PYTHONIOENCODING", "utf-8"),
            ("GIT_TERMINAL_PROMPT", "0"),
            ("DEBIAN_FRONTEND", "noninteractive"),
            ("PIP_NO_INPUT", "1"),
        ] {
            env.insert(k.into(), v.into());
        }
        let p = |rel: &str| join_rel(root, rel).display().to_string();
        env.insert(ENV_WORKSPACE_DIR.into(), p(""));
        env.insert(ENV_SKILLS_DIR.into(), p(SKILLS_SUBDIR));
        env.insert(ENV_WORK_DIR.into(), p(WORK_SUBDIR));
        env.insert(ENV_OUTPUT_DIR.into(), p(OUTPUT_SUBDIR));
        env.insert(ENV_RUN_DIR.into(), p(run_dir));
        env.insert(ENV_SKILL_NAME.into(), skill.into());
        env
    }

    pub(crate) async fn run(
        &self,
        session_id: &str,
        request: &RunRequest,
    ) -> WorkspaceResult<RunResult> {
        let span = tracing::info_span!("workspace.run", session = session_id, skill = %request.spec.skill, runtime = self.name);
        self.run_inner(session_id, request).instrument(span).await
    }

    async fn run_inner(
        &self,
        session_id: &str,
        request: &RunRequest,
    ) -> WorkspaceResult<RunResult> {
        let (ws, _) = self.workspace(session_id).await?;
        self.ensure_staged(session_id, &ws, &request.spec.skill)
            .await?;
        self.check_disk(&ws, "run refused").await?;
        // Check the output globs before running anything.
        let globs = output_globs(&request.io)?;
        let staged_inputs = if request.spec.inputs.is_empty() {
            Vec::new()
        } else {
            self.stage_inputs_in(&ws, &request.spec.inputs)
                .instrument(tracing::info_span!(
                    "workspace.stage.inputs",
                    count = request.spec.inputs.len()
                ))
                .await?
        };
        let prepared = self
            .prepare(
                &ws,
                Launch {
                    spec: &request.spec,
                    editor_text: request.io.editor_text.as_deref(),
                    tty: false,
                },
            )
            .await?;
        let timeout = request
            .spec
            .timeout
            .map_or(self.cfg.default_timeout, Duration::from_secs)
            .min(self.cfg.max_timeout);
        let mut warnings = prepared.warnings.clone();
        // The disk cap is watched while the command runs: passing it drops
        // the launch, which kills the run (H7).
        let launched = tokio::select! {
            biased;
            outcome = self.launch(&ws, &prepared, request.io.stdin.as_deref(), timeout) => outcome,
            over = self.watch_disk(&ws) => {
                // Dropping the launch started the kill; make sure every
                // process of the run is gone before answering.
                let marker = prepared.marker.clone();
                let _ = blocking(move || Ok(sweep(&marker, None))).await;
                Err(over)
            }
        };
        let (launched, cgroup) = match launched {
            Ok((outcome, cgroup)) => (Ok(outcome), cgroup),
            Err(e) => (Err(e), None),
        };
        tidy_run_dir(&ws, &prepared, cgroup);
        let ran = Duration::from_millis(launched.as_ref().map_or(0, |o| o.duration_ms));
        {
            let mut usage = lock(&ws.usage);
            usage.unmeasured = usage.unmeasured.saturating_add(ran);
        }
        let outcome = launched?;
        if may_have_hit_file_limit(&outcome) {
            // It may have written up to what was left of the cap faster
            // than the slack lets a run go unmeasured (H7).
            lock(&ws.usage).make_due();
        }
        if self.check_disk(&ws, "after the run").await.is_err() {
            warnings.push(format!(
                "the workspace is now over its disk cap ({} bytes, {} files): later runs in \
                 this session will be refused",
                self.cfg.limits.max_bytes, self.cfg.limits.max_files
            ));
        }
        if outcome.stdout_cut {
            warnings.push(format!(
                "stdout was longer than {} bytes; the middle was dropped",
                self.cfg.output_cap
            ));
        }
        if outcome.stderr_cut {
            warnings.push(format!(
                "stderr was longer than {} bytes; the middle was dropped",
                self.cfg.output_cap
            ));
        }
        if outcome.timed_out {
            warnings.push(format!(
                "the command timed out after {} s and was killed with all its processes",
                timeout.as_secs_f64()
            ));
        }
        warnings.extend(outcome.warnings.iter().cloned());
        let mut result = RunResult::default();
        result.stdout = outcome.stdout;
        result.stderr = outcome.stderr;
        result.exit_code = outcome.exit_code;
        result.timed_out = outcome.timed_out;
        result.duration_ms = outcome.duration_ms;
        result.run_dir = prepared.run_dir.clone();
        result.staged_inputs = staged_inputs;
        if !globs.is_empty() {
            self.collect_outputs(&ws, &request.io, globs, &mut result, &mut warnings)
                .instrument(tracing::info_span!(
                    "workspace.collect",
                    session = session_id
                ))
                .await?;
        }
        result.warnings = warnings;
        Ok(result)
    }

    /// Measures the workspace when a measurement is due (commands ran
    /// since the last), and refuses `what` when it is over its disk cap
    /// (H7).
    pub(crate) async fn check_disk(&self, ws: &Arc<Ws>, what: &str) -> WorkspaceResult<()> {
        let limits = self.cfg.limits;
        let usage = measure_when(ws, &limits, Usage::due).await?;
        if usage.over(&limits) {
            return Err(usage.error(&limits, what));
        }
        Ok(())
    }

    /// Returns (with the error to report) once the workspace is over its
    /// disk cap, measuring it every interval; never returns otherwise.
    pub(crate) async fn watch_disk(&self, ws: &Arc<Ws>) -> WorkspaceError {
        watch_disk(Arc::clone(ws), self.cfg.limits).await
    }

    /// Runs a prepared command: through the workspace's long-lived sandbox,
    /// or as a process of its own (locally, or in a `bwrap` of its own with
    /// `sandbox_per_run`), bounded by the runtime's limits.
    async fn launch(
        &self,
        ws: &Arc<Ws>,
        prepared: &Prepared,
        stdin: Option<&str>,
        timeout: Duration,
    ) -> WorkspaceResult<(Outcome, Option<RunCgroup>)> {
        #[cfg(unix)]
        if let Launcher::Sandbox(sb) = &self.cfg.launcher
            && !sb.per_run()
        {
            {
                // A supervisor found dead before the command started
                // (killed, or its sandbox broke) is replaced once; the
                // command has not run, so running it again is safe.
                for _ in 0..2 {
                    let sup = self.supervisor(ws, sb).await?;
                    let ran = sup
                        .run(
                            &prepared.cwd,
                            &prepared.inner.0,
                            &prepared.inner.1,
                            &prepared.env,
                            stdin,
                            timeout,
                            self.cfg.output_cap,
                            prepared.file_size_limit,
                        )
                        .await?;
                    if let Some(outcome) = ran {
                        return Ok((outcome, None));
                    }
                }
                return Err(WorkspaceError::new(
                    WorkspaceErrorKind::Spawn,
                    "the sandbox supervisor stopped twice before the command started",
                ));
            }
        }
        #[cfg(feature = "container")]
        if let Launcher::Container(c) = &self.cfg.launcher {
            return Ok((
                self.launch_container(ws, c, prepared, stdin, timeout)
                    .await?,
                None,
            ));
        }
        let mut cgroup = crate::limits::run_cgroup(&self.cfg.enforcement).await?;
        let procs = match &cgroup {
            Some(c) => c.procs().map_err(|e| io_error("the run's cgroup", e))?,
            None => Vec::new(),
        };
        let status = match &self.cfg.launcher {
            Launcher::Sandbox(_) => Some(
                rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
                    .map_err(|e| io_error("the run's status pipe", e.into()))?,
            ),
            _ => None,
        };
        let (status_r, status_w) = match status {
            Some((r, w)) => (Some(r), Some(w)),
            None => (None, None),
        };
        let running = {
            let _gate = crate::spawn_gate::spawning().await;
            match &self.cfg.launcher {
                Launcher::Local => self.spawn_local(prepared, procs, stdin.is_some())?,
                _ => spawn_tokio(
                    self.spawn_command(prepared, status_w, procs)?,
                    prepared,
                    stdin.is_some(),
                )?,
            }
        };
        let mut outcome = execute(running, prepared, stdin, timeout, self.cfg.output_cap).await?;
        if let Some(r) = status_r
            && let Some(notes) = read_status(r)
        {
            outcome.warnings.extend(crate::supervisor::notes_warnings(
                notes,
                &self.cfg.enforcement,
            ));
        }
        if let Some(c) = cgroup.as_mut() {
            outcome
                .warnings
                .extend(c.warnings(&self.cfg.enforcement.limits));
        }
        if outcome.exit_code != Some(0)
            && outcome.warnings.is_empty()
            && let Some(note) = self.cfg.enforcement.fallback_note()
        {
            outcome.warnings.push(note);
        }
        // Everything of the run is gone (killed at its end): the cgroup
        // goes back to the pool once checked empty, off the result's path
        // (`tidy_run_dir`).
        Ok((outcome, cgroup))
    }

    /// The process that runs a prepared command outside the shared
    /// sandbox: the command itself (local), or a `bwrap` of its own with
    /// the helper as its init; with the run's environment and working
    /// folder, its limits, joining `cgroups`, without the host's other
    /// descriptors. `status` receives the helper's report (sandbox only).
    pub(crate) fn spawn_command(
        &self,
        prepared: &Prepared,
        status: Option<OwnedFd>,
        cgroups: Vec<OwnedFd>,
    ) -> WorkspaceResult<tokio::process::Command> {
        let (program, args) = &prepared.inner;
        let mut cmd = match &self.cfg.launcher {
            Launcher::Local => {
                let mut cmd = std::process::Command::new(program);
                cmd.args(args).current_dir(&prepared.cwd);
                self.local_setup(prepared, cgroups).install(&mut cmd);
                cmd
            }
            Launcher::Sandbox(sb) => {
                let root = prepared.workspace_root().ok_or_else(|| {
                    io_error("the workspace", std::io::ErrorKind::NotFound.into())
                })?;
                sb.per_run_command(
                    root,
                    &prepared.cwd,
                    program,
                    args,
                    status,
                    cgroups,
                    prepared.file_size_limit,
                )?
            }
            #[cfg(feature = "container")]
            Launcher::Container(_) => {
                return Err(WorkspaceError::new(
                    WorkspaceErrorKind::Unsupported,
                    "the container runtime starts no host process",
                ));
            }
        };
        cmd.env_clear().envs(&prepared.env);
        Ok(tokio::process::Command::from(cmd))
    }

    /// Runs a prepared command in a container of its own, its standard
    /// input (when given) written into the run folder first, through the
    /// workspace handle.
    #[cfg(feature = "container")]
    async fn launch_container(
        &self,
        ws: &Arc<Ws>,
        containers: &crate::container::Containers,
        prepared: &Prepared,
        stdin: Option<&str>,
        timeout: Duration,
    ) -> WorkspaceResult<Outcome> {
        if let Some(text) = stdin {
            // Within the disk cap (H7), like every file the runtime writes.
            if text.len() as u64 > prepared.file_size_limit {
                return Err(WorkspaceError::new(
                    WorkspaceErrorKind::LimitExceeded,
                    format!(
                        "standard input of {} bytes does not fit in what is left of the \
                         workspace's disk cap ({} bytes)",
                        text.len(),
                        prepared.file_size_limit
                    ),
                ));
            }
            let (w, run_dir, text) = (Arc::clone(ws), prepared.run_dir.clone(), text.to_owned());
            blocking(move || {
                w.dir
                    .walk(&run_dir)
                    .map_err(|e| crate::fsutil::walk_error("run folder", e))?
                    .write_new(crate::container::STDIN_FILE, text.as_bytes(), 0o444)
                    .map_err(|e| io_error("standard input", e))
            })
            .await?;
        }
        let outcome = containers
            .run(ws, prepared, stdin.is_some(), timeout, self.cfg.output_cap)
            .await;
        // Gone with the run: the next run of the session must not read
        // them, and the run folder can be used again.
        let (w, run_dir) = (Arc::clone(ws), prepared.run_dir.clone());
        let removed = blocking(move || {
            let dir = w
                .dir
                .walk(&run_dir)
                .map_err(|e| crate::fsutil::walk_error("run folder", e))?;
            dir.remove(crate::container::STDIN_FILE);
            dir.remove(crate::container::STATUS_FILE);
            Ok(())
        })
        .await;
        if let Err(e) = removed {
            tracing::warn!("removing the run's own files: {e}");
        }
        outcome
    }

    /// What a local command gets between `fork` and `exec`: no inherited
    /// descriptors, the run's resource limits (its file size lowered to
    /// what is left of the disk cap) and its cgroups.
    fn local_setup(
        &self,
        prepared: &Prepared,
        cgroups: Vec<OwnedFd>,
    ) -> skills_sandbox::ChildSetup {
        let mut setup = skills_sandbox::ChildSetup::new();
        setup.close_inherited();
        let mut rlimits = self.cfg.enforcement.rlimits.clone();
        skills_sandbox::protocol::lower_file_size(&mut rlimits, prepared.file_size_limit);
        for l in rlimits {
            setup.rlimit(l);
        }
        for c in cgroups {
            setup.join_cgroup(c);
        }
        setup
    }

    /// Starts a prepared local command without a `fork` (see
    /// [`Running::spawn_direct`]).
    fn spawn_local(
        &self,
        prepared: &Prepared,
        cgroups: Vec<OwnedFd>,
        stdin: bool,
    ) -> WorkspaceResult<Running> {
        let (program, args) = &prepared.inner;
        let env: Vec<(std::ffi::OsString, std::ffi::OsString)> = prepared
            .env
            .iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        Running::spawn_direct(
            self.local_setup(prepared, cgroups),
            program.as_ref(),
            &args,
            &env,
            &prepared.cwd,
            stdin,
        )
        .map_err(|e| spawn_error(prepared, &e))
    }

    /// The workspace's supervisor, started (or restarted when a skill's
    /// `.venv/` changed) on demand.
    #[cfg(unix)]
    async fn supervisor(
        &self,
        ws: &Arc<Ws>,
        sb: &Sandbox,
    ) -> WorkspaceResult<Arc<crate::supervisor::Supervisor>> {
        let current = crate::supervisor::venvs(&ws.root);
        let usable = || {
            lock(&ws.supervisor)
                .as_ref()
                .filter(|s| s.usable(&current))
                .map(Arc::clone)
        };
        if let Some(s) = usable() {
            return Ok(s);
        }
        let _starting = ws.supervisor_start.lock().await;
        if let Some(s) = usable() {
            return Ok(s);
        }
        let (sb, root) = (sb.clone(), ws.root.clone());
        let started = blocking(move || crate::supervisor::Supervisor::start(&sb, &root)).await?;
        // The one it replaces ends once its running commands are done (they
        // hold it; the last one drops it).
        lock(&ws.supervisor).replace(Arc::clone(&started));
        Ok(started)
    }

    /// Collects the files `request` asks for after a run (or an exec
    /// session) into `result`, inlined or not, saved as artifacts when asked
    /// (or forced).
    pub(crate) async fn collect_outputs(
        &self,
        ws: &Arc<Ws>,
        request: &RunIo,
        globs: Vec<String>,
        result: &mut RunResult,
        warnings: &mut Vec<String>,
    ) -> WorkspaceResult<()> {
        let manifest = request.outputs.clone().unwrap_or_default();
        let inline = !request.omit_inline_content
            && (request.outputs.is_none() || manifest.inline || !request.output_files.is_empty());
        // The request's caps, lowered to the runtime's (H8).
        let limits = &self.cfg.limits;
        let spec = CollectSpec {
            globs,
            inline,
            max_files: quota::clamp(
                manifest.max_files,
                DEFAULT_MAX_FILES,
                limits.max_output_files,
                "max_files",
                warnings,
            ),
            max_file_bytes: quota::clamp(
                manifest.max_file_bytes,
                DEFAULT_MAX_FILE_BYTES,
                limits.max_output_file_bytes,
                "max_file_bytes",
                warnings,
            ),
            max_total_bytes: quota::clamp(
                manifest.max_total_bytes,
                DEFAULT_MAX_TOTAL_BYTES,
                limits.max_output_total_bytes,
                "max_total_bytes",
                warnings,
            ),
            failed: !result.success(),
            owners: self.owners(),
        };
        let w = Arc::clone(ws);
        let collected = blocking(move || collect(&w.dir, &spec)).await?;
        warnings.extend(collected.warnings);
        let save = request.save_as_artifacts || manifest.save || self.cfg.force_save_artifacts;
        if save && self.cfg.artifacts.is_none() {
            warnings.push(
                "files were not saved as artifacts: no artifact service is configured".to_owned(),
            );
        }
        let inline_span = tracing::info_span!("workspace.inline", files = collected.files.len());
        let _inline = inline_span.enter();
        let mut files = Vec::with_capacity(collected.files.len());
        let mut saves = Vec::new();
        for c in collected.files {
            if save && self.cfg.artifacts.is_some() {
                let short = c
                    .file
                    .name
                    .strip_prefix(&format!("{OUTPUT_SUBDIR}/"))
                    .unwrap_or(&c.file.name);
                let name = format!(
                    "{}{}{}",
                    request.artifact_prefix.as_deref().unwrap_or(""),
                    manifest.name_template.as_deref().unwrap_or(""),
                    short
                );
                if c.file.truncated {
                    warnings.push(format!(
                        "artifact {name} holds only the first {} bytes of {}",
                        c.bytes.len(),
                        c.file.name
                    ));
                }
                saves.push((name, c.file.name.clone(), c.file.mime_type.clone(), c.bytes));
            }
            if result.primary_output.is_none()
                && c.is_text
                && c.file.content.as_deref().is_some_and(|t| !t.is_empty())
            {
                result.primary_output = Some(c.file.clone());
            }
            files.push(c.file);
        }
        drop(_inline);
        if let Some(service) = &self.cfg.artifacts {
            for (name, source, mime, bytes) in saves {
                let size = bytes.len() as u64;
                match service.save(&ws.session_id, &name, &mime, bytes).await {
                    Ok(version) => result
                        .artifact_files
                        .push(SavedArtifact::new(name, version, source, mime, size)),
                    Err(e) => {
                        warnings.push(format!("could not save {source} as artifact {name}: {e}"))
                    }
                }
            }
        }
        if request.omit_inline_content {
            for f in &mut files {
                f.content = None;
            }
            result.primary_output = None;
        }
        result.output_files = files;
        Ok(())
    }

    pub(crate) async fn read_file(
        &self,
        session_id: &str,
        path: &str,
        max_bytes: u64,
    ) -> WorkspaceResult<WorkspaceFile> {
        let (ws, _) = self.workspace(session_id).await?;
        let rel = normalize_relative(path.strip_prefix(WORKSPACE_SCHEME).unwrap_or(path))?;
        // The caller's cap, lowered to the runtime's (H8).
        let cap = max_bytes.min(self.cfg.limits.max_output_file_bytes);
        let owners = self.owners();
        blocking(move || match ws.dir.read_beneath(&rel, cap, &owners) {
            Ok(Opened::File { size, bytes }) => {
                let mime = sniff(&rel, &bytes);
                Ok(WorkspaceFile::new(rel, mime, size, bytes))
            }
            Ok(Opened::Outside) => Err(WorkspaceError::new(
                WorkspaceErrorKind::PathEscape,
                format!("{rel} leads out of the workspace"),
            )),
            Ok(Opened::NotRegular) => Err(WorkspaceError::new(
                WorkspaceErrorKind::InvalidRequest,
                format!("{rel} is not a regular file"),
            )),
            Ok(Opened::ForeignLink) => Err(WorkspaceError::new(
                WorkspaceErrorKind::PathEscape,
                format!("{rel} is a hard link to a file of another user"),
            )),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(WorkspaceError::new(
                WorkspaceErrorKind::NotFound,
                format!("no file {rel} in the workspace"),
            )),
            Err(e) => Err(io_error(&rel, e)),
        })
        .await
    }

    pub(crate) fn exec_session(
        &self,
        session_id: &str,
        exec_id: &str,
    ) -> WorkspaceResult<Arc<ExecSession>> {
        validate_session_id(session_id)?;
        self.workspaces
            .get(session_id)
            .and_then(|ws| ws.execs.get(exec_id).map(|e| Arc::clone(e.value())))
            .ok_or_else(|| {
                WorkspaceError::new(
                    WorkspaceErrorKind::NotFound,
                    format!("no exec session {exec_id:?} in session {session_id:?}"),
                )
            })
    }

    pub(crate) async fn cleanup(&self, session_id: &str) -> WorkspaceResult<CleanupReport> {
        validate_session_id(session_id)?;
        let span = tracing::info_span!("workspace.cleanup", session = session_id);
        async {
            let ws = self.workspaces.remove(session_id).map(|(_, ws)| ws);
            let mut killed = 0;
            if let Some(ws) = &ws {
                let execs: Vec<_> = ws.execs.iter().map(|e| Arc::clone(e.value())).collect();
                ws.execs.clear();
                for e in execs {
                    if e.kill().await {
                        killed += 1;
                    }
                }
                #[cfg(unix)]
                if let Some(s) = lock(&ws.supervisor).take() {
                    s.kill();
                }
                #[cfg(feature = "container")]
                if let Launcher::Container(c) = &self.cfg.launcher {
                    c.remove_session(session_id).await;
                }
                let w = Arc::clone(ws);
                blocking(move || {
                    // No run folder appears while the workspace goes.
                    w.run_dirs.close();
                    Ok(sweep_in(&w.marker, None, Some(&w.root)))
                })
                .await?;
            }
            // Through handles, never following a link, never above the
            // session folder (H6).
            let root = Arc::clone(&self.cfg.root_dir);
            let sid = session_id.to_owned();
            let removed = blocking(move || {
                root.remove_tree(&sid)
                    .map_err(|e| io_error("removing the workspace", e))
            })
            .await?;
            Ok(CleanupReport::new(session_id, removed, killed))
        }
        .instrument(span)
        .await
    }

    /// Registers an exec session.
    pub(crate) fn add_exec(&self, ws: &Ws, session: Arc<ExecSession>) {
        ws.execs.insert(session.id().to_owned(), session);
    }

    /// The users whose hard-linked files the runtime reads (H3): the
    /// sandbox's user when it has one (then a hard link to a root-owned
    /// host file is refused), else the runtime's own.
    pub(crate) fn owners(&self) -> Vec<u32> {
        vec![self.cfg.sandbox_owner.map_or_else(euid, |o| o.uid)]
    }
}

impl Ws {
    /// A handle on the run folder `run_dir` (relative), reached without
    /// following a link; what is made through it (FIFOs, the standard input
    /// file) is handed to the sandbox's user when there is one (contract
    /// with the sandbox side, threat model H4, H6).
    #[allow(dead_code, reason = "for the sandbox side's run files")]
    pub(crate) fn run_dir_handle(&self, run_dir: &str) -> std::io::Result<DirHandle> {
        self.dir.walk(run_dir)
    }
}

/// Makes the workspace's next run folder in the background, unless one is
/// ready or the workspace is going away.
pub(crate) fn make_spare_run_dir(ws: &Arc<Ws>) {
    let ws = Arc::clone(ws);
    drop(tokio::task::spawn_blocking(move || {
        ws.run_dirs.make_spare(&ws.dir);
    }));
}

/// Measures the workspace when `due` says so (one measurement at a time);
/// returns the usage now known (H7).
pub(crate) async fn measure_when(
    ws: &Arc<Ws>,
    limits: &WorkspaceLimits,
    due: fn(&Usage) -> bool,
) -> WorkspaceResult<Usage> {
    let current = *lock(&ws.usage);
    if !due(&current) {
        return Ok(current);
    }
    let _one = ws.measuring.lock().await;
    let current = *lock(&ws.usage);
    if !due(&current) {
        return Ok(current);
    }
    let (w, l) = (Arc::clone(ws), *limits);
    let measured = blocking(move || {
        quota::measure(&w.dir, &l).map_err(|e| io_error("measuring the workspace", e))
    })
    .instrument(tracing::debug_span!(
        "workspace.measure",
        session = %ws.session_id
    ))
    .await?;
    *lock(&ws.usage) = measured;
    Ok(measured)
}

/// Measures the workspace every interval until it is over its disk cap;
/// then returns the error to report (H7).
pub(crate) async fn watch_disk(ws: Arc<Ws>, limits: WorkspaceLimits) -> WorkspaceError {
    loop {
        let wait = lock(&ws.usage).interval();
        tokio::time::sleep(wait).await;
        match measure_when(&ws, &limits, Usage::stale).await {
            Ok(usage) if usage.over(&limits) => {
                return usage.error(
                    &limits,
                    "the command was killed when the workspace passed its disk cap",
                );
            }
            Ok(_) => {}
            // A workspace that cannot be measured (removed by cleanup) is
            // not watched any further.
            Err(_) => std::future::pending::<()>().await,
        }
    }
}

/// After a run, in one background task: gives its cgroup back (see
/// [`RunCgroup::release`]) and tidies its folder (see [`RunDirs`]).
fn tidy_run_dir(ws: &Arc<Ws>, prepared: &Prepared, cgroup: Option<RunCgroup>) {
    ws.run_dirs
        .finished(prepared.run_dir.clone(), prepared.editor);
    let ws = Arc::clone(ws);
    drop(tokio::task::spawn_blocking(move || {
        if let Some(c) = cgroup {
            c.release();
        }
        ws.run_dirs.tidy(&ws.dir);
    }));
}

/// The locale category the environment overlay sets to `C.UTF-8`.
const UTF8_CATEGORY: &str = "LC_CTYPE";

/// A program and its arguments.
type CommandLine = (PathBuf, Vec<OsString>);

/// Resolves what to spawn (the wrapped command line, then the command
/// itself): the policy's program or `bash -c`, wrapped in
/// `setsid` for a terminal and in `bwrap` for the sandbox. Blocking (file
/// checks).
fn command_line(
    cfg: &Config,
    root: &Path,
    host_cwd: &Path,
    command: &str,
    restricted: bool,
    tty: bool,
) -> WorkspaceResult<(CommandLine, CommandLine)> {
    let (program, args): (PathBuf, Vec<String>) = if restricted {
        let resolved = cfg.policy.check(command, host_cwd)?;
        (resolved.program, resolved.args)
    } else {
        (cfg.bash.clone(), vec!["-c".to_owned(), command.to_owned()])
    };
    let (program, args) = if tty {
        let setsid = SETSID_PATHS
                .iter()
                .map(PathBuf::from)
                .find(|p| p.is_file())
                .ok_or_else(|| {
                    WorkspaceError::new(
                        WorkspaceErrorKind::Unavailable,
                        "setsid (util-linux) not found at /usr/bin/setsid or /bin/setsid; terminals need it",
                    )
                })?;
        let mut a = vec![
            "-w".to_owned(),
            "-c".to_owned(),
            program.display().to_string(),
        ];
        a.extend(args);
        (setsid, a)
    } else {
        (program, args)
    };
    let inner = (
        program.clone(),
        args.iter().map(OsString::from).collect::<Vec<_>>(),
    );
    // The launcher wraps it when it spawns (`Engine::command`): `bwrap` and
    // the helper for the sandbox.
    let _ = root;
    Ok((inner.clone(), inner))
}

/// Writes the editor text and the helper `EDITOR` points at into the run
/// folder `run_dir` of the session folder `ws` (at `root`), through a handle
/// and with `O_EXCL`: a command cannot redirect these writes (H4). Both are
/// handed to the sandbox's user, who runs the helper.
fn write_editor(
    ws: &DirHandle,
    root: &Path,
    run_dir: &str,
    text: &str,
) -> WorkspaceResult<PathBuf> {
    let handle = ws
        .walk(run_dir)
        .map_err(|e| crate::fsutil::walk_error("run folder", e))?;
    handle
        .write_new(EDITOR_TEXT, text.as_bytes(), 0o600)
        .map_err(|e| io_error("editor text", e))?;
    handle
        .write_new(EDITOR_SCRIPT, EDITOR_HELPER.as_bytes(), 0o500)
        .map_err(|e| io_error("editor script", e))?;
    Ok(root.join(run_dir).join(EDITOR_SCRIPT))
}

/// The editor helper: writes the run's editor text into the file edited.
const EDITOR_HELPER: &str = "#!/bin/sh\n# Writes the run's editor_text into the file being edited.\nfor f in \"$@\"; do last=\"$f\"; done\n[ -n \"$last\" ] && cat \"$RUN_DIR/.editor_text\" > \"$last\"\n";

fn is_protected(name: &str) -> bool {
    [
        ENV_WORKSPACE_DIR,
        ENV_SKILLS_DIR,
        ENV_WORK_DIR,
        ENV_OUTPUT_DIR,
        ENV_RUN_DIR,
        ENV_SKILL_NAME,
        RUN_MARKER_VAR,
        SESSION_MARKER_VAR,
    ]
    .contains(&name)
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What a finished process did.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) stdout_cut: bool,
    pub(crate) stderr_cut: bool,
    pub(crate) exit_code: Option<i32>,
    pub(crate) timed_out: bool,
    pub(crate) duration_ms: u64,
    /// What the launcher noticed (limits reached).
    pub(crate) warnings: Vec<String>,
}

/// The exit status a shell reports for a command killed by `SIGXFSZ`
/// (128 + the signal's number).
const SHELL_XFSZ_STATUS: i32 = 128 + rustix::process::Signal::XFSZ.as_raw();

/// Whether a finished run may have stopped at its file-size limit
/// (`RLIMIT_FSIZE`: what was left of the disk cap when it started): it died
/// of a signal (`SIGXFSZ` among others; a run that timed out was killed by
/// the runtime), or it is a shell reporting a command killed by `SIGXFSZ`.
/// Such a run is measured after it whatever its length: writing up to the
/// cap can take less than [`quota::UNMEASURED_SLACK`].
fn may_have_hit_file_limit(outcome: &Outcome) -> bool {
    !outcome.timed_out && matches!(outcome.exit_code, None | Some(SHELL_XFSZ_STATUS))
}

/// Kills a run's processes when dropped armed (its future was dropped).
struct SweepOnDrop {
    marker: Option<String>,
    pgid: Option<u32>,
}

impl Drop for SweepOnDrop {
    fn drop(&mut self) {
        if let Some(marker) = self.marker.take() {
            let pgid = self.pgid;
            if let Some(pgid) = pgid {
                kill_group(pgid);
            }
            let job = move || {
                sweep(&marker, pgid);
            };
            match tokio::runtime::Handle::try_current() {
                Ok(handle) => drop(handle.spawn_blocking(job)),
                Err(_) => job(),
            }
        }
    }
}

/// The helper's report on a `bwrap` per run: the notes of its exit
/// frame, when it wrote one.
fn read_status(r: OwnedFd) -> Option<skills_sandbox::protocol::Notes> {
    use skills_sandbox::protocol::{MAX_REPLY_FRAME, Reply};
    // The helper wrote it before exiting; non-blocking all the same, in
    // case something still holds the write end.
    let _ = rustix::fs::fcntl_setfl(&r, rustix::fs::OFlags::NONBLOCK);
    let mut reader = skills_sandbox::transport::FrameReader::pipe(r, MAX_REPLY_FRAME);
    match Reply::decode(&reader.next_frame().ok()??).ok()? {
        Reply::Exited { notes, .. } => Some(notes),
        _ => None,
    }
}

impl Outcome {
    /// The outcome from what was captured of each stream (`None`: nothing).
    pub(crate) fn new(
        stdout: Option<crate::capture::Captured>,
        stderr: Option<crate::capture::Captured>,
        exit_code: Option<i32>,
        timed_out: bool,
        duration_ms: u64,
    ) -> Self {
        let (stdout, stdout_cut) = stdout.map(|c| c.into_text()).unwrap_or_default();
        let (stderr, stderr_cut) = stderr.map(|c| c.into_text()).unwrap_or_default();
        Self {
            stdout,
            stderr,
            stdout_cut,
            stderr_cut,
            exit_code,
            timed_out,
            duration_ms,
            warnings: Vec::new(),
        }
    }
}

/// Starts a prepared command from tokio's `Command` (`cmd`, from
/// [`Engine::spawn_command`]): piped output, standard input piped when
/// there is some, a process group of its own, killed when dropped.
pub(crate) fn spawn_tokio(
    mut cmd: tokio::process::Command,
    prepared: &Prepared,
    stdin: bool,
) -> WorkspaceResult<Running> {
    cmd.stdin(if stdin { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    let child = cmd.spawn().map_err(|e| spawn_error(prepared, &e))?;
    Ok(Running::from_tokio(child))
}

/// The error for a command that could not be started.
pub(crate) fn spawn_error(prepared: &Prepared, e: &std::io::Error) -> WorkspaceError {
    WorkspaceError::new(
        WorkspaceErrorKind::Spawn,
        format!("could not start {}: {e}", prepared.program.display()),
    )
}

/// Runs a started command to its end: feeds stdin, captures output,
/// enforces the timeout and kills everything the command left behind.
pub(crate) async fn execute(
    mut child: Running,
    prepared: &Prepared,
    stdin: Option<&str>,
    timeout: Duration,
    cap: usize,
) -> WorkspaceResult<Outcome> {
    let started = Instant::now();
    let pgid = child.pid;
    // When this future is dropped before the command finished (the caller
    // gave up), dropping the child only reaches the direct child: sweep the rest.
    let mut abandoned = SweepOnDrop {
        marker: Some(prepared.marker.clone()),
        pgid,
    };
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let bytes = text.as_bytes().to_vec();
        tokio::spawn(async move {
            let _ = pipe.write_all(&bytes).await;
            let _ = pipe.shutdown().await;
        });
    }
    let out = child
        .stdout
        .take()
        .map(|p| tokio::spawn(read_capped(p, cap)));
    let err = child
        .stderr
        .take()
        .map(|p| tokio::spawn(read_capped(p, cap)));
    let (status, timed_out) = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(status) => (status.ok(), false),
        Err(_) => {
            let marker = prepared.marker.clone();
            let _ = tokio::task::spawn_blocking(move || sweep(&marker, pgid)).await;
            (child.wait().await.ok(), true)
        }
    };
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    abandoned.marker = None;
    if let Some(pgid) = pgid
        && !timed_out
        && group_alive(pgid)
    {
        kill_group(pgid);
    }
    let mut readers = (out, err);
    let finished = async {
        let o = match readers.0.as_mut() {
            Some(h) => h.await.ok(),
            None => None,
        };
        let e = match readers.1.as_mut() {
            Some(h) => h.await.ok(),
            None => None,
        };
        (o, e)
    };
    tokio::pin!(finished);
    let (o, e) = match tokio::time::timeout(PIPE_GRACE, &mut finished).await {
        Ok(r) => r,
        Err(_) => {
            // Something outside the group still holds the output pipes.
            let marker = prepared.marker.clone();
            let _ = tokio::task::spawn_blocking(move || sweep(&marker, pgid)).await;
            tokio::time::timeout(Duration::from_secs(2), &mut finished)
                .await
                .unwrap_or_default()
        }
    };
    let exit_code = status.flatten();
    Ok(Outcome::new(o, e, exit_code, timed_out, duration_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_may_have_hit_its_file_limit_is_measured() {
        let outcome = |exit_code, timed_out| Outcome::new(None, None, exit_code, timed_out, 1);
        // Killed by a signal, SIGXFSZ among them.
        assert!(may_have_hit_file_limit(&outcome(None, false)));
        // A shell reporting its command killed by SIGXFSZ (bash: 153).
        assert!(may_have_hit_file_limit(&outcome(
            Some(128 + rustix::process::Signal::XFSZ.as_raw()),
            false
        )));
        assert!(!may_have_hit_file_limit(&outcome(Some(0), false)));
        assert!(!may_have_hit_file_limit(&outcome(Some(1), false)));
        // Killed by the runtime at its timeout.
        assert!(!may_have_hit_file_limit(&outcome(None, true)));
    }
}
