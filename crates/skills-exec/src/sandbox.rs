//! The bubblewrap sandbox (F-EXE-8): finding `bwrap`, checking that it works
//! here, and the arguments that confine one command.
//!
//! What a sandboxed command gets: new user, PID, network, IPC, UTS (and, when
//! available, cgroup) namespaces; no capabilities; a new terminal session (no
//! `TIOCSTI` into the caller's terminal); only a loopback network; the system
//! folders (`/usr`, `/bin`, `/sbin`, `/lib*`, `/etc`, `/opt`) read-only; a
//! private `/tmp`, `/proc` and `/dev`; no home folder (only paths allowed with
//! [`SandboxOptions::allow_read`], read-only); the session's workspace
//! writable except its staged skills (read-only, their `.venv/` writable);
//! nothing else of the host. `bwrap` dies with its parent, and everything in
//! the PID namespace dies with `bwrap`. Runs normally share one `bwrap` per
//! workspace, each in a PID namespace of its own (see [`crate::supervisor`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use skills_core::{SKILLS_SUBDIR, WorkspaceError, WorkspaceErrorKind};

use crate::fsutil::is_within;

/// Where `bwrap` is looked for, in order. Never on `PATH`: a fake `bwrap` put
/// early on `PATH` is never run.
pub const BWRAP_PATHS: [&str; 2] = ["/usr/bin/bwrap", "/bin/bwrap"];

/// System folders mounted read-only (when present).
const SYSTEM_DIRS: [&str; 9] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
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
    /// (their own loopback network, hostname, `/proc`) at several times the
    /// cost of a run (see docs/exec.md, "One sandbox per workspace").
    /// Default `false`.
    pub sandbox_per_run: bool,
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
}

/// A checked, working bubblewrap.
#[derive(Debug, Clone)]
pub(crate) struct Sandbox {
    bwrap: PathBuf,
    allow_read: Vec<PathBuf>,
    path: String,
    /// The arguments every run shares (namespaces, system mounts), computed
    /// once.
    base: Vec<OsString>,
    /// Set when a PID namespace can be nested inside the sandbox: runs then
    /// go through one long-lived `bwrap` per workspace (see
    /// [`crate::supervisor`]); otherwise each run starts its own.
    #[cfg(unix)]
    helpers: Option<crate::supervisor::Helpers>,
}

impl Sandbox {
    /// Finds `bwrap` and checks that it can create its namespaces here
    /// (blocking: runs `bwrap … true` once).
    pub(crate) fn probe(options: &SandboxOptions) -> Result<Self, WorkspaceError> {
        let bwrap = find_bwrap()?;
        let mut allow_read = Vec::new();
        for p in &options.allow_read {
            let c = p.canonicalize().map_err(|e| {
                WorkspaceError::new(
                    WorkspaceErrorKind::InvalidRequest,
                    format!("allowed read path {}: {e}", p.display()),
                )
            })?;
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
        let mut sandbox = Sandbox {
            bwrap,
            allow_read,
            path: path.join(":"),
            base: Vec::new(),
            #[cfg(unix)]
            helpers: None,
        };
        sandbox.base = sandbox.base_args();
        let mut args = sandbox.base.clone();
        args.push("--".into());
        args.push("/bin/sh".into());
        args.push("-c".into());
        args.push("exit 0".into());
        let out = std::process::Command::new(&sandbox.bwrap)
            .args(&args)
            .env_clear()
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| {
                WorkspaceError::new(
                    WorkspaceErrorKind::Unavailable,
                    format!("could not start {}: {e}", sandbox.bwrap.display()),
                )
            })?;
        if !out.status.success() {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::Unavailable,
                format!(
                    "bubblewrap cannot create its namespaces here ({}); user namespaces may be off (sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces, or an AppArmor restriction)",
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            ));
        }
        #[cfg(unix)]
        if !options.sandbox_per_run {
            sandbox.helpers =
                crate::supervisor::helpers().filter(|h| crate::supervisor::probe(&sandbox, h));
            if sandbox.helpers.is_none() {
                tracing::warn!(
                    "one sandbox per workspace is not possible here (no nestable user namespace, no perl at /usr/bin/perl, or not x86-64/aarch64); every run starts its own bwrap"
                );
            }
        }
        Ok(sandbox)
    }

    /// The arguments of the long-lived sandbox: the base ones, and when the
    /// runtime runs as root, a sandbox user other than root (65534): mapping
    /// root into the runs' nested user namespaces would need `CAP_SETFCAP`,
    /// which the sandbox does not have, and an unmapped user cannot create
    /// files in a run's private `/tmp`.
    #[cfg(unix)]
    pub(crate) fn supervisor_base(&self) -> Vec<OsString> {
        let mut a = self.base.clone();
        if rustix::process::geteuid().is_root() {
            for p in ["--uid", "65534", "--gid", "65534"] {
                a.push(p.into());
            }
        }
        a
    }

    /// The supervisor's helpers, when runs can share one `bwrap` per
    /// workspace.
    #[cfg(unix)]
    pub(crate) fn helpers(&self) -> Option<crate::supervisor::Helpers> {
        self.helpers.clone()
    }

    /// The `PATH` inside the sandbox.
    pub(crate) fn path_var(&self) -> &str {
        &self.path
    }

    /// The `bwrap` binary.
    pub(crate) fn program(&self) -> &Path {
        &self.bwrap
    }

    fn base_args(&self) -> Vec<OsString> {
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
            "skills-sandbox",
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
        for p in ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"] {
            a.push(p.into());
        }
        for p in &self.allow_read {
            a.push("--ro-bind".into());
            a.push(p.clone().into_os_string());
            a.push(p.clone().into_os_string());
        }
        a
    }

    /// The `bwrap` arguments that run `program args` in `cwd` with only the
    /// workspace `ws_root` writable (its `skills/` read-only except each
    /// skill's `.venv/`).
    pub(crate) fn args(
        &self,
        ws_root: &Path,
        cwd: &Path,
        program: &Path,
        args: &[String],
    ) -> Result<Vec<OsString>, WorkspaceError> {
        self.args_from(self.base.clone(), ws_root, cwd, program, args)
    }

    /// [`Sandbox::args`] on top of `base` (the base arguments, or those of
    /// the long-lived sandbox).
    pub(crate) fn args_from(
        &self,
        base: Vec<OsString>,
        ws_root: &Path,
        cwd: &Path,
        program: &Path,
        args: &[String],
    ) -> Result<Vec<OsString>, WorkspaceError> {
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
        let mut a = base;
        a.push("--bind".into());
        a.push(ws_root.into());
        a.push(ws_root.into());
        let skills = ws_root.join(SKILLS_SUBDIR);
        a.push("--ro-bind".into());
        a.push(skills.clone().into());
        a.push(skills.clone().into());
        if let Ok(entries) = std::fs::read_dir(&skills) {
            for entry in entries.flatten() {
                let venv = entry.path().join(".venv");
                if std::fs::symlink_metadata(&venv).is_ok_and(|m| m.is_dir()) {
                    a.push("--bind".into());
                    a.push(venv.clone().into());
                    a.push(venv.into());
                }
            }
        }
        a.push("--chdir".into());
        a.push(cwd.into());
        a.push("--".into());
        a.push(program.into());
        a.extend(args.iter().map(OsString::from));
        Ok(a)
    }
}
