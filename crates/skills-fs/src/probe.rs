//! [`SystemProbe`]: answers [`Probe`]'s questions about the machine this
//! process runs on, so [`Requirements::missing`](skills_core::Requirements::missing)
//! and [`VisibilityPolicy::check_requirements`](skills_core::VisibilityPolicy::check_requirements)
//! can judge real skills.
//!
//! The `PATH` lookup is written here by hand: the standard library has no
//! `which`, and the `which` crate would be one more dependency for about
//! twenty lines. A program counts as found when a `PATH` entry holds an
//! executable regular file of that name (on Windows, also with one of the
//! `PATHEXT` extensions). Each name is looked up once per probe and the answer
//! kept, so checking thousands of skills that need `git` stats `PATH` once;
//! [`SystemProbe::shared`] is one probe for the whole process.
//!
//! A lookup does blocking `stat` calls: callers on a tokio runtime run the
//! check in `spawn_blocking` or once at startup, never on a worker thread.

use std::collections::HashMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use skills_core::Probe;

/// A [`Probe`] of this machine: `PATH` lookups (cached per name), the
/// process environment and [`std::env::consts::OS`]. It cannot tell which
/// tools a host offers ([`Probe::has_tool`] answers `None`).
#[derive(Debug)]
pub struct SystemProbe {
    /// The `PATH` searched, read when the probe was made.
    path: OsString,
    /// Whether each program name looked up so far was found.
    bins: Mutex<HashMap<String, bool>>,
}

impl Default for SystemProbe {
    fn default() -> Self {
        Self::new()
    }
}

impl SystemProbe {
    /// A probe searching the process's `PATH` as it is now.
    pub fn new() -> Self {
        Self::with_path(std::env::var_os("PATH").unwrap_or_default())
    }

    /// A probe searching `path` (entries separated as in `PATH` on this
    /// system) instead of the process's `PATH`: for a host that runs skills
    /// with another `PATH`, and for tests.
    pub fn with_path(path: impl Into<OsString>) -> Self {
        Self {
            path: path.into(),
            bins: Mutex::new(HashMap::new()),
        }
    }

    /// One probe for the whole process (made on first use, from the `PATH`
    /// of that moment), so each program name is looked up once per process.
    pub fn shared() -> &'static SystemProbe {
        static SHARED: OnceLock<SystemProbe> = OnceLock::new();
        SHARED.get_or_init(SystemProbe::new)
    }

    /// Where `name` is found on this probe's `PATH`, if anywhere (not cached).
    /// A name holding a path separator is checked as a path, as a shell does.
    /// Empty `PATH` entries are skipped, not read as the current folder.
    pub fn find_bin(&self, name: &str) -> Option<PathBuf> {
        let _span = tracing::trace_span!("probe_bin", bin = name).entered();
        if name.is_empty() {
            return None;
        }
        if name.contains('/') || (cfg!(windows) && name.contains('\\')) {
            return candidates(Path::new(name))
                .into_iter()
                .find(|path| is_executable(path));
        }
        std::env::split_paths(&self.path)
            .filter(|dir| !dir.as_os_str().is_empty())
            .flat_map(|dir| candidates(&dir.join(name)))
            .find(|path| is_executable(path))
    }
}

impl Probe for SystemProbe {
    fn has_bin(&self, name: &str) -> bool {
        let cached = self
            .bins
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .copied();
        if let Some(found) = cached {
            return found;
        }
        // Looked up without the lock held: two threads asking for the same
        // new name both look, and agree.
        let found = self.find_bin(name).is_some();
        self.bins
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(name.to_owned(), found);
        found
    }

    fn has_env(&self, name: &str) -> bool {
        !name.is_empty()
            && !name.contains(['=', '\0'])
            && std::env::var_os(name).is_some_and(|value| !value.is_empty())
    }

    fn os(&self) -> &str {
        std::env::consts::OS
    }
}

/// The files `path` may stand for: itself, and on Windows itself with each
/// `PATHEXT` extension.
fn candidates(path: &Path) -> Vec<PathBuf> {
    let mut out = vec![path.to_path_buf()];
    if cfg!(windows) {
        let exts =
            std::env::var_os("PATHEXT").unwrap_or_else(|| OsString::from(".COM;.EXE;.BAT;.CMD"));
        for ext in exts.to_string_lossy().split(';').filter(|e| !e.is_empty()) {
            let mut with: OsString = path.as_os_str().to_owned();
            with.push(OsStr::new(ext));
            out.push(PathBuf::from(with));
        }
    }
    out
}

/// Whether `path` is a regular file (after links) this process may execute:
/// on Unix one with an execute bit set, elsewhere any regular file.
fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        true
    }
}
