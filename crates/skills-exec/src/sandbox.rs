//! The bubblewrap sandbox (F-EXE-8): finding `bwrap` and the helper,
//! checking what the sandbox needs here, and the `bwrap` command lines.
//!
//! What a sandboxed command gets: new user, PID, network, IPC, UTS (and,
//! when available, cgroup) namespaces; no capabilities; a new terminal
//! session (no `TIOCSTI` into the caller's terminal); only a loopback
//! network; the system folders (`/usr`, `/bin`, `/sbin`, `/lib*`, `/etc`,
//! `/opt`) read-only; a private `/tmp` and `/dev/shm` of a fixed size, its
//! own `/proc` and a read-only `/dev`; no home folder (only paths allowed
//! with [`SandboxOptions::allow_read`], read-only); the session's workspace
//! writable except its staged skills (read-only, their `.venv/` writable);
//! nothing else of the host. Inside, the helper ([`skills_sandbox`]) runs
//! every command as a PID namespace's PID 2 under a seccomp filter,
//! landlock and the run's limits.
//!
//! **Never host root** (threat model: the command is hostile). When the
//! runtime runs as root, `bwrap` is started as an unprivileged user
//! ([`SandboxOptions::sandbox_user`], 65534 `nobody` by default), with no
//! supplementary groups: its user namespace then maps that user, so a
//! command is that host user, never host root, and `/proc/sys`, the
//! hostname and root's files are out of its reach as they are for any
//! unprivileged user. Runs normally share one `bwrap` per workspace, each
//! in a slot of its own (see [`crate::supervisor`]).

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use skills_sandbox::protocol::HelperConfig;
use skills_workspace::{SKILLS_SUBDIR, WorkspaceError, WorkspaceErrorKind};

use crate::fsutil::is_within;
use crate::limits::{Enforcement, Kind, RunLimits};

/// Where `bwrap` is looked for, in order. Never on `PATH`: a fake `bwrap` put
/// early on `PATH` is never run.
pub const BWRAP_PATHS: [&str; 2] = ["/usr/bin/bwrap", "/bin/bwrap"];

/// Where the helper binary is looked for after the configured path, the
/// current executable (when it called [`skills_sandbox::run_if_helper`])
/// and the folder of the current executable.
pub const HELPER_PATHS: [&str; 2] = ["/usr/local/bin/skills-sandbox", "/usr/bin/skills-sandbox"];

/// The host user a sandbox runs as when the runtime runs as root:
/// `nobody`, which owns no file, and which every system defines (so tools
/// inside that look up the current user, such as `git` or `whoami`, still
/// work).
pub const DEFAULT_SANDBOX_USER: (u32, u32) = (65534, 65534);

/// The sandbox's host name.
pub(crate) const HOSTNAME: &str = "skills-sandbox";

/// System folders mounted read-only (when present).
const SYSTEM_DIRS: [&str; 9] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
];

/// The sysctls that can keep user namespaces from unprivileged users.
const USERNS_SYSCTLS: [(&str, &str); 2] = [
    ("/proc/sys/kernel/unprivileged_userns_clone", "0"),
    ("/proc/sys/user/max_user_namespaces", "0"),
];

/// Finds `bwrap` at one of [`BWRAP_PATHS`]: a regular file, owned by root and
/// writable by nobody else.
pub fn find_bwrap() -> Result<PathBuf, WorkspaceError> {
    for candidate in BWRAP_PATHS {
        let path = Path::new(candidate);
        let Ok(meta) = std::fs::metadata(path) else {
            continue;
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            if !meta.is_file() || meta.uid() != 0 || meta.mode() & 0o022 != 0 {
                return Err(WorkspaceError::new(
                    WorkspaceErrorKind::Unavailable,
                    format!(
                        "{candidate} is not a root-owned file writable only by root; refusing to use it"
                    ),
                ));
            }
        }
        #[cfg(not(unix))]
        let _ = meta;
        return Ok(path.to_path_buf());
    }
    Err(WorkspaceError::new(
        WorkspaceErrorKind::Unavailable,
        "bubblewrap is not installed (looked at /usr/bin/bwrap and /bin/bwrap); install it with `apt-get install bubblewrap`",
    ))
}

/// Finds the sandbox helper: `configured` when given, else the current
/// executable when it called [`skills_sandbox::run_if_helper`], else
/// `skills-sandbox` next to the current executable (or one folder up from
/// a cargo test binary in `deps/`), else one of [`HELPER_PATHS`]. The file must be a regular file writable only by its
/// owner, who is root or the runtime's user.
pub fn find_helper(configured: Option<&Path>) -> Result<PathBuf, WorkspaceError> {
    let exe = std::env::current_exe().ok();
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = configured {
        candidates.push(p.to_path_buf());
    } else {
        if skills_sandbox::current_exe_is_helper()
            && let Some(e) = &exe
        {
            candidates.push(e.clone());
        }
        if let Some(dir) = exe.as_deref().and_then(Path::parent) {
            candidates.push(dir.join(skills_sandbox::HELPER_BINARY));
            // A cargo test or bench binary lives in `target/<profile>/deps`,
            // the binaries one folder up.
            if dir.file_name().is_some_and(|n| n == "deps")
                && let Some(up) = dir.parent()
            {
                candidates.push(up.join(skills_sandbox::HELPER_BINARY));
            }
        }
        candidates.extend(HELPER_PATHS.iter().map(PathBuf::from));
    }
    for c in &candidates {
        let Ok(meta) = std::fs::metadata(c) else {
            continue;
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let me = rustix::process::geteuid().as_raw();
            if !meta.is_file() || (meta.uid() != 0 && meta.uid() != me) || meta.mode() & 0o022 != 0
            {
                return Err(WorkspaceError::new(
                    WorkspaceErrorKind::Unavailable,
                    format!(
                        "the sandbox helper {} is not a file writable only by its owner (root or this user); refusing to use it",
                        c.display()
                    ),
                ));
            }
        }
        #[cfg(not(unix))]
        let _ = meta;
        return Ok(c.clone());
    }
    let looked: Vec<String> = candidates.iter().map(|c| c.display().to_string()).collect();
    Err(WorkspaceError::new(
        WorkspaceErrorKind::Unavailable,
        format!(
            "the sandbox helper `skills-sandbox` was not found (looked at {}); install it next to this program or at /usr/local/bin, set SandboxOptions::helper, or call skills_sandbox::run_if_helper() first thing in main",
            looked.join(", ")
        ),
    ))
}

/// Options of the sandbox.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SandboxOptions {
    /// Host paths visible read-only inside the sandbox (toolchains installed
    /// under the home folder: `~/.local/share/uv/python`, `~/.nvm`, …).
    pub allow_read: Vec<PathBuf>,
    /// Folders added to the front of the sandbox's `PATH` (they must be
    /// visible: system folders or allowed paths).
    pub path_prepend: Vec<String>,
    /// Starts one `bwrap` for every run instead of one per workspace shared
    /// by the session's runs: full isolation between the runs of a session
    /// (their own loopback network and `/proc`) at several times the cost
    /// of a run (see docs/exec.md, "One sandbox per workspace").
    /// Default `false`.
    pub sandbox_per_run: bool,
    /// The helper binary (default: see [`find_helper`]).
    pub helper: Option<PathBuf>,
    /// The host user and group the sandbox runs as when the runtime runs
    /// as root (default [`DEFAULT_SANDBOX_USER`]; never 0). A runtime that
    /// is not root runs the sandbox as itself.
    pub sandbox_user: Option<(u32, u32)>,
}

impl SandboxOptions {
    /// The defaults: nothing of the home folder visible.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes a host path visible read-only.
    #[must_use]
    pub fn allow_read(mut self, path: impl Into<PathBuf>) -> Self {
        self.allow_read.push(path.into());
        self
    }

    /// Puts a folder at the front of the sandbox's `PATH`.
    #[must_use]
    pub fn path_prepend(mut self, dir: impl Into<String>) -> Self {
        self.path_prepend.push(dir.into());
        self
    }

    /// Starts one `bwrap` per run (`true`) instead of one per workspace
    /// (`false`, the default); see the field of the same name.
    #[must_use]
    pub fn sandbox_per_run(mut self, per_run: bool) -> Self {
        self.sandbox_per_run = per_run;
        self
    }

    /// Uses this helper binary.
    #[must_use]
    pub fn helper(mut self, path: impl Into<PathBuf>) -> Self {
        self.helper = Some(path.into());
        self
    }

    /// Runs the sandbox as this host user and group when the runtime runs
    /// as root (see the field of the same name).
    #[must_use]
    pub fn sandbox_user(mut self, uid: u32, gid: u32) -> Self {
        self.sandbox_user = Some((uid, gid));
        self
    }
}

/// The owner of what a sandboxed command may write, when it is not the
/// runtime's user (the runtime runs as root).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SandboxOwner {
    pub(crate) uid: u32,
    pub(crate) gid: u32,
}

/// A checked bubblewrap and helper.
#[derive(Debug, Clone)]
pub(crate) struct Sandbox {
    bwrap: PathBuf,
    helper: PathBuf,
    allow_read: Vec<PathBuf>,
    path: String,
    /// The arguments every sandbox shares (namespaces, system mounts),
    /// computed once.
    base: Vec<OsString>,
    per_run: bool,
    /// The host user of the sandbox when the runtime is root.
    owner: Option<SandboxOwner>,
    /// How the helper confines commands (the writable workspace is added
    /// per sandbox).
    helper_config: HelperConfig,
    pub(crate) enforcement: Arc<Enforcement>,
}

impl Sandbox {
    /// Finds `bwrap` and the helper and checks what can be checked without
    /// starting them (blocking: a few `stat`s and `/proc` reads). A sandbox
    /// that cannot start is reported by the first run that tries.
    pub(crate) fn new(options: &SandboxOptions, limits: RunLimits) -> Result<Self, WorkspaceError> {
        let bwrap = find_bwrap()?;
        let helper = find_helper(options.helper.as_deref())?;
        check_user_namespaces()?;
        let owner = if rustix::process::geteuid().is_root() {
            let (uid, gid) = options.sandbox_user.unwrap_or(DEFAULT_SANDBOX_USER);
            if uid == 0 || gid == 0 {
                return Err(WorkspaceError::new(
                    WorkspaceErrorKind::InvalidRequest,
                    "the sandbox user cannot be root (uid or gid 0)",
                ));
            }
            Some(SandboxOwner { uid, gid })
        } else {
            None
        };
        let mut allow_read = Vec::new();
        for p in &options.allow_read {
            let c = p.canonicalize().map_err(|e| {
                WorkspaceError::new(
                    WorkspaceErrorKind::InvalidRequest,
                    format!("allowed read path {}: {e}", p.display()),
                )
            })?;
            if let Some(o) = owner {
                check_reachable(&c, o)?;
            }
            allow_read.push(c);
        }
        let mut path: Vec<String> = options.path_prepend.clone();
        for allowed in &allow_read {
            let bin = allowed.join("bin");
            if bin.is_dir() {
                path.push(bin.display().to_string());
            }
        }
        path.extend(
            [
                "/usr/local/sbin",
                "/usr/local/bin",
                "/usr/sbin",
                "/usr/bin",
                "/sbin",
                "/bin",
            ]
            .iter()
            .map(|s| (*s).to_owned()),
        );
        let enforcement = Arc::new(Enforcement::new(limits, Kind::Sandbox));
        let helper_config = HelperConfig {
            tmp_size: enforcement.limits.tmp_size,
            shm_size: enforcement.limits.shm_size,
            rlimits: enforcement.rlimits.clone(),
            seccomp: true,
            landlock: true,
            writable: Vec::new(),
        };
        let mut sandbox = Sandbox {
            bwrap,
            helper,
            allow_read,
            path: path.join(":"),
            base: Vec::new(),
            per_run: options.sandbox_per_run,
            owner,
            helper_config,
            enforcement,
        };
        sandbox.base = sandbox.base_args();
        Ok(sandbox)
    }

    /// `true` when every run starts its own `bwrap`.
    pub(crate) fn per_run(&self) -> bool {
        self.per_run
    }

    /// The owner of what commands write, when the runtime is root.
    pub(crate) fn owner(&self) -> Option<SandboxOwner> {
        self.owner
    }

    /// The `PATH` inside the sandbox.
    pub(crate) fn path_var(&self) -> &str {
        &self.path
    }

    fn base_args(&self) -> Vec<OsString> {
        let limits = &self.enforcement.limits;
        let mut a: Vec<OsString> = [
            "--die-with-parent",
            "--new-session",
            "--unshare-user",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--cap-drop",
            "ALL",
            "--hostname",
            HOSTNAME,
        ]
        .iter()
        .map(OsString::from)
        .collect();
        for dir in SYSTEM_DIRS {
            let path = Path::new(dir);
            match std::fs::symlink_metadata(path) {
                Ok(m) if m.file_type().is_symlink() => {
                    if let Ok(target) = std::fs::read_link(path) {
                        a.push("--symlink".into());
                        a.push(target.into_os_string());
                        a.push(dir.into());
                    }
                }
                Ok(m) if m.is_dir() => {
                    a.push("--ro-bind".into());
                    a.push(dir.into());
                    a.push(dir.into());
                }
                _ => {}
            }
        }
        a.push("--proc".into());
        a.push("/proc".into());
        a.push("--dev".into());
        a.push("/dev".into());
        // Sized temporary folders (a slot mounts its own over them, of the
        // same sizes), then `/dev` itself read-only: nothing can be stored
        // there beside the device files.
        for (size, dest) in [(limits.shm_size, "/dev/shm"), (limits.tmp_size, "/tmp")] {
            if size > 0 {
                a.push("--size".into());
                a.push(size.to_string().into());
            }
            a.push("--tmpfs".into());
            a.push(dest.into());
        }
        a.push("--remount-ro".into());
        a.push("/dev".into());
        for p in &self.allow_read {
            a.push("--ro-bind".into());
            a.push(p.clone().into_os_string());
            a.push(p.clone().into_os_string());
        }
        a
    }

    /// The `bwrap` arguments up to the program: the base ones, the
    /// workspace `ws_root` writable (its `skills/` read-only except each
    /// skill's `.venv/`), the working folder.
    fn args_for(&self, ws_root: &Path, cwd: &Path) -> Result<Vec<OsString>, WorkspaceError> {
        for dir in SYSTEM_DIRS.iter().map(Path::new).chain([Path::new("/")]) {
            if is_within(ws_root, dir) {
                return Err(WorkspaceError::new(
                    WorkspaceErrorKind::InvalidRequest,
                    format!(
                        "the workspace {} contains the system folder {}; refusing to make it writable",
                        ws_root.display(),
                        dir.display()
                    ),
                ));
            }
        }
        if let Some(o) = self.owner {
            check_reachable(ws_root, o)?;
        }
        let mut a = self.base.clone();
        a.push("--bind".into());
        a.push(ws_root.into());
        a.push(ws_root.into());
        let skills = ws_root.join(SKILLS_SUBDIR);
        a.push("--ro-bind".into());
        a.push(skills.clone().into());
        a.push(skills.clone().into());
        for (venv, _) in crate::supervisor::venvs(ws_root) {
            a.push("--bind".into());
            a.push(venv.clone().into());
            a.push(venv.into());
        }
        a.push("--chdir".into());
        a.push(cwd.into());
        Ok(a)
    }

    /// The helper's configuration for a workspace.
    fn helper_config(&self, ws_root: &Path) -> HelperConfig {
        use std::os::unix::ffi::OsStrExt;
        let mut cfg = self.helper_config.clone();
        cfg.writable = vec![ws_root.as_os_str().as_bytes().to_vec()];
        cfg
    }

    /// The command that starts the workspace's supervisor: `bwrap` with the
    /// helper in supervisor mode, run as the sandbox user when the runtime
    /// is root. Blocking (opens the helper, checks paths).
    pub(crate) fn supervisor_command(
        &self,
        ws_root: &Path,
    ) -> Result<std::process::Command, WorkspaceError> {
        let mut setup = skills_sandbox::ChildSetup::new();
        setup.close_inherited();
        let helper = self.open_helper()?;
        let fd = setup.inherit(helper);
        let mut args = self.args_for(ws_root, ws_root)?;
        args.push("--".into());
        args.push(format!("/proc/self/fd/{fd}").into());
        args.push(skills_sandbox::HELPER_ARG.into());
        args.push(skills_sandbox::MODE_SUPERVISE.into());
        args.push(self.helper_config(ws_root).to_arg().into());
        let mut cmd = std::process::Command::new(&self.bwrap);
        cmd.args(&args).env_clear();
        self.as_sandbox_user(&mut cmd);
        setup.install(&mut cmd);
        Ok(cmd)
    }

    /// The command that runs `program args` in a `bwrap` of its own, the
    /// helper as its init: in `cwd`, reporting on `status` when given,
    /// joining `cgroups`. The caller sets the environment and standard
    /// streams. Blocking.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn per_run_command(
        &self,
        ws_root: &Path,
        cwd: &Path,
        program: &Path,
        args: &[OsString],
        status: Option<OwnedFd>,
        cgroups: Vec<OwnedFd>,
        file_size: u64,
    ) -> Result<std::process::Command, WorkspaceError> {
        let mut setup = skills_sandbox::ChildSetup::new();
        setup.close_inherited();
        let fd = setup.inherit(self.open_helper()?);
        let mut a = self.args_for(ws_root, cwd)?;
        let mut config = self.helper_config(ws_root);
        skills_sandbox::protocol::lower_file_size(&mut config.rlimits, file_size);
        a.push("--as-pid-1".into());
        a.push("--".into());
        a.push(format!("/proc/self/fd/{fd}").into());
        a.push(skills_sandbox::HELPER_ARG.into());
        a.push(skills_sandbox::MODE_RUN.into());
        a.push(config.to_arg().into());
        if let Some(s) = status {
            a.push("--status-fd".into());
            a.push(setup.inherit(s).to_string().into());
        }
        for c in cgroups {
            a.push("--cgroup-fd".into());
            a.push(setup.inherit(c).to_string().into());
        }
        a.push("--".into());
        a.push(program.into());
        a.extend(args.iter().cloned());
        let mut cmd = std::process::Command::new(&self.bwrap);
        cmd.args(&a);
        self.as_sandbox_user(&mut cmd);
        setup.install(&mut cmd);
        Ok(cmd)
    }

    /// Starts `cmd` as the sandbox user when the runtime is root (std
    /// clears the supplementary groups then).
    fn as_sandbox_user(&self, cmd: &mut std::process::Command) {
        #[cfg(unix)]
        if let Some(o) = self.owner {
            use std::os::unix::process::CommandExt;
            cmd.uid(o.uid).gid(o.gid);
        }
    }

    /// The helper binary, opened for `bwrap` to execute through
    /// `/proc/self/fd` (it need not be visible inside, nor reachable by the
    /// sandbox user).
    fn open_helper(&self) -> Result<OwnedFd, WorkspaceError> {
        let f = std::fs::File::open(&self.helper).map_err(|e| {
            WorkspaceError::new(
                WorkspaceErrorKind::Unavailable,
                format!("the sandbox helper {}: {e}", self.helper.display()),
            )
        })?;
        Ok(OwnedFd::from(f))
    }
}

/// Fails when user namespaces are off for unprivileged users here.
fn check_user_namespaces() -> Result<(), WorkspaceError> {
    for (path, off) in USERNS_SYSCTLS {
        if std::fs::read_to_string(path).is_ok_and(|v| v.trim() == off) {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::Unavailable,
                format!(
                    "user namespaces are off for unprivileged users here ({path} is {off}); the sandbox needs them"
                ),
            ));
        }
    }
    Ok(())
}

/// Fails unless the sandbox user can reach `path`: every folder above it
/// must let that user pass (`bwrap` runs as that user and mounts `path` by
/// name).
pub(crate) fn check_reachable(path: &Path, owner: SandboxOwner) -> Result<(), WorkspaceError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let mut dir = path.parent();
        while let Some(d) = dir {
            let Ok(m) = std::fs::metadata(d) else {
                dir = d.parent();
                continue;
            };
            let bit = if m.uid() == owner.uid {
                0o100
            } else if m.gid() == owner.gid {
                0o010
            } else {
                0o001
            };
            if m.mode() & bit == 0 {
                return Err(WorkspaceError::new(
                    WorkspaceErrorKind::Unavailable,
                    format!(
                        "the sandbox runs as user {} (the runtime is root), who cannot reach {}: {} is not traversable for it (mode {:o}); make it traversable (chmod o+x) or choose another folder",
                        owner.uid,
                        path.display(),
                        d.display(),
                        m.mode() & 0o7777
                    ),
                ));
            }
            dir = d.parent();
        }
    }
    #[cfg(not(unix))]
    let _ = (path, owner);
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn unreachable_folders_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("a/b");
        std::fs::create_dir_all(&inner).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir.path().join("a"), std::fs::Permissions::from_mode(0o700))
            .unwrap();
        let owner = SandboxOwner {
            uid: 65534,
            gid: 65534,
        };
        // Owned by this user, not by 65534: the "other" bits count.
        let e = check_reachable(&inner, owner).unwrap_err();
        assert_eq!(e.kind(), WorkspaceErrorKind::Unavailable);
        assert!(e.to_string().contains("/a"), "{e}");
        std::fs::set_permissions(dir.path().join("a"), std::fs::Permissions::from_mode(0o711))
            .unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
        check_reachable(&inner, owner).unwrap();
    }

    #[test]
    fn a_missing_helper_is_explained() {
        let e = find_helper(Some(Path::new("/nonexistent/skills-sandbox"))).unwrap_err();
        assert_eq!(e.kind(), WorkspaceErrorKind::Unavailable);
        assert!(e.to_string().contains("run_if_helper"), "{e}");
    }
}
