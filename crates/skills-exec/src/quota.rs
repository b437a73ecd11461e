//! What a workspace may hold and use (threat model: H7, H8, H9): its disk
//! cap, the caps requests are clamped to, and the interactive sessions it may
//! keep alive.
//!
//! The disk cap is enforced by measuring: the runtime walks the session
//! folder by handle (never following a link) and adds up what is allocated
//! on disk and how many entries there are. Only commands write there
//! besides the runtime (which counts what it writes itself), and only while
//! they run, so the runtime measures after a run once the runs since the
//! last measurement took [`UNMEASURED_SLACK`] in all (a run of `true` costs
//! no walk, a run that wrote for 70 ms does, and so does one that may have
//! stopped at its `RLIMIT_FSIZE`, which is what was left of the cap), and every
//! [`MEASURE_INTERVAL`] while a run or an interactive session is alive; a
//! command that passes the cap is killed, and the session refuses further
//! work. Between two measurements a command can write what the disk takes
//! in one interval, and allocate more (`fallocate` costs no writing); the
//! sandbox's `RLIMIT_FSIZE` (set from [`Usage::file_size_limit`]) bounds
//! every single file. A strict bound needs a file system with a size of its
//! own or quotas, which the runtime does not set up.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use skills_workspace::{
    DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_FILES, DEFAULT_MAX_TOTAL_BYTES, WorkspaceError,
    WorkspaceErrorKind,
};

use crate::fsutil::DirHandle;

/// Default disk cap of one workspace: 1 GiB allocated on disk.
pub const DEFAULT_WORKSPACE_MAX_BYTES: u64 = 1 << 30;
/// Default cap on the files, folders and links of one workspace.
pub const DEFAULT_WORKSPACE_MAX_FILES: u64 = 100_000;
/// Default cap on interactive sessions running at once in one workspace.
pub const DEFAULT_MAX_EXEC_SESSIONS: usize = 4;
/// Default cap on interactive sessions running at once in one runtime.
pub const DEFAULT_MAX_EXEC_SESSIONS_TOTAL: usize = 32;
/// Default longest life of an interactive session: 30 minutes.
pub const DEFAULT_MAX_EXEC_LIFETIME: Duration = Duration::from_secs(30 * 60);
/// Shortest time between two measurements of a workspace while a command
/// runs.
pub(crate) const MEASURE_INTERVAL: Duration = Duration::from_millis(50);
/// Run time since the last measurement after which a finished run is
/// followed by one (what a command writes grows with how long it runs).
pub(crate) const UNMEASURED_SLACK: Duration = Duration::from_millis(10);
/// A measurement may take at most this share of the time (the interval
/// grows with the workspace).
const MEASURE_SHARE: u32 = 10;
/// Finished interactive sessions kept for a last look; older ones are
/// dropped when a new session starts.
pub(crate) const MAX_FINISHED_EXECS: usize = 16;

/// The limits of a runtime's workspaces (see docs/exec.md, "Workspace limits").
///
/// ```
/// use skills_exec::WorkspaceLimits;
/// let limits = WorkspaceLimits::new()
///     .max_bytes(256 << 20)
///     .max_files(20_000)
///     .max_exec_sessions(2);
/// assert_eq!(limits.max_bytes, 256 << 20);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorkspaceLimits {
    /// Most bytes a workspace may hold on disk
    /// ([`DEFAULT_WORKSPACE_MAX_BYTES`]).
    pub max_bytes: u64,
    /// Most files, folders and links a workspace may hold
    /// ([`DEFAULT_WORKSPACE_MAX_FILES`]).
    pub max_files: u64,
    /// Most files one run collects, whatever the request asks
    /// ([`DEFAULT_MAX_FILES`]).
    pub max_output_files: usize,
    /// Most bytes read of one collected file or one `read_file`, whatever
    /// the request asks ([`DEFAULT_MAX_FILE_BYTES`]).
    pub max_output_file_bytes: u64,
    /// Most bytes one run collects in all, whatever the request asks
    /// ([`DEFAULT_MAX_TOTAL_BYTES`]).
    pub max_output_total_bytes: u64,
    /// Most interactive sessions running at once in one workspace
    /// ([`DEFAULT_MAX_EXEC_SESSIONS`]).
    pub max_exec_sessions: usize,
    /// Most interactive sessions running at once in the whole runtime
    /// ([`DEFAULT_MAX_EXEC_SESSIONS_TOTAL`]).
    pub max_exec_sessions_total: usize,
    /// Longest life of an interactive session; a request's timeout is
    /// lowered to it ([`DEFAULT_MAX_EXEC_LIFETIME`]).
    pub max_exec_lifetime: Duration,
}

impl Default for WorkspaceLimits {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_WORKSPACE_MAX_BYTES,
            max_files: DEFAULT_WORKSPACE_MAX_FILES,
            max_output_files: DEFAULT_MAX_FILES,
            max_output_file_bytes: DEFAULT_MAX_FILE_BYTES,
            max_output_total_bytes: DEFAULT_MAX_TOTAL_BYTES,
            max_exec_sessions: DEFAULT_MAX_EXEC_SESSIONS,
            max_exec_sessions_total: DEFAULT_MAX_EXEC_SESSIONS_TOTAL,
            max_exec_lifetime: DEFAULT_MAX_EXEC_LIFETIME,
        }
    }
}

impl WorkspaceLimits {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the disk cap in bytes.
    #[must_use]
    pub fn max_bytes(mut self, bytes: u64) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// Sets the cap on files, folders and links.
    #[must_use]
    pub fn max_files(mut self, files: u64) -> Self {
        self.max_files = files;
        self
    }

    /// Sets the caps collected outputs are clamped to: files per run, bytes
    /// per file (also `read_file`), bytes per run.
    #[must_use]
    pub fn max_outputs(mut self, files: usize, file_bytes: u64, total_bytes: u64) -> Self {
        self.max_output_files = files;
        self.max_output_file_bytes = file_bytes;
        self.max_output_total_bytes = total_bytes;
        self
    }

    /// Sets the cap on interactive sessions running at once per workspace.
    #[must_use]
    pub fn max_exec_sessions(mut self, n: usize) -> Self {
        self.max_exec_sessions = n;
        self
    }

    /// Sets the cap on interactive sessions running at once in the runtime.
    #[must_use]
    pub fn max_exec_sessions_total(mut self, n: usize) -> Self {
        self.max_exec_sessions_total = n;
        self
    }

    /// Sets the longest life of an interactive session.
    #[must_use]
    pub fn max_exec_lifetime(mut self, lifetime: Duration) -> Self {
        self.max_exec_lifetime = lifetime;
        self
    }
}

/// What a workspace held at its last measurement.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Usage {
    /// Bytes allocated on disk.
    pub(crate) bytes: u64,
    /// Files, folders and links.
    pub(crate) files: u64,
    /// Folders it could not look into (too deep, a path too long to open,
    /// a mode that forbids reading): counts as over, since they could hide
    /// anything.
    pub(crate) unmeasurable: bool,
    /// When it was measured.
    pub(crate) at: Option<Instant>,
    /// How long measuring took.
    pub(crate) cost: Duration,
    /// How long commands ran since it was measured.
    pub(crate) unmeasured: Duration,
}

impl Usage {
    /// `true` when over `limits`.
    pub(crate) fn over(&self, limits: &WorkspaceLimits) -> bool {
        self.unmeasurable || self.bytes > limits.max_bytes || self.files > limits.max_files
    }

    /// The error a workspace over its cap gives.
    pub(crate) fn error(&self, limits: &WorkspaceLimits, what: &str) -> WorkspaceError {
        let held = if self.unmeasurable {
            format!(
                "folders it cannot measure (nested deeper than {} levels, or unreadable)",
                crate::fsutil::MAX_WALK_DEPTH
            )
        } else {
            format!("{} bytes in {} files", self.bytes, self.files)
        };
        WorkspaceError::new(
            WorkspaceErrorKind::LimitExceeded,
            format!(
                "{what}: the workspace holds {held}, over its cap of {} bytes and {} files \
                 (threat model H7); this session takes no more runs: clean it up or use \
                 another session",
                limits.max_bytes, limits.max_files
            ),
        )
    }

    /// How long measurements should be apart, so they take at most a tenth
    /// of the time.
    pub(crate) fn interval(&self) -> Duration {
        MEASURE_INTERVAL.max(self.cost * MEASURE_SHARE)
    }

    /// `true` when a measurement is due while commands run: the last is
    /// one interval old.
    pub(crate) fn stale(&self) -> bool {
        self.at.is_none_or(|at| at.elapsed() >= self.interval())
    }

    /// `true` when a measurement is due between runs: never measured, or
    /// commands ran [`UNMEASURED_SLACK`] since.
    pub(crate) fn due(&self) -> bool {
        self.at.is_none() || self.unmeasured >= UNMEASURED_SLACK
    }

    /// Makes the next check between runs measure, whatever the runs since
    /// the last measurement took.
    pub(crate) fn make_due(&mut self) {
        self.unmeasured = self.unmeasured.max(UNMEASURED_SLACK);
    }

    /// Counts bytes the runtime itself wrote.
    pub(crate) fn add(&mut self, bytes: u64, files: u64) {
        self.bytes = self.bytes.saturating_add(bytes);
        self.files = self.files.saturating_add(files);
    }

    /// What is left of the byte cap.
    pub(crate) fn bytes_left(&self, limits: &WorkspaceLimits) -> u64 {
        limits.max_bytes.saturating_sub(self.bytes)
    }

    /// What is left of the file cap.
    pub(crate) fn files_left(&self, limits: &WorkspaceLimits) -> u64 {
        limits.max_files.saturating_sub(self.files)
    }

    /// The largest file a command may write (for `RLIMIT_FSIZE` in the
    /// sandbox, S6): what is left of the byte cap, at least one byte.
    pub(crate) fn file_size_limit(&self, limits: &WorkspaceLimits) -> u64 {
        self.bytes_left(limits).max(1)
    }
}

/// Measures the workspace `dir` (blocking): allocated bytes (hard links
/// counted once) and entries, stopping just past the file cap.
pub(crate) fn measure(dir: &DirHandle, limits: &WorkspaceLimits) -> std::io::Result<Usage> {
    let started = Instant::now();
    let mut usage = Usage::default();
    let mut linked: HashSet<(u64, u64)> = HashSet::new();
    let max_entries = usize::try_from(limits.max_files.saturating_add(1)).unwrap_or(usize::MAX);
    let end = dir.walk_tree("", max_entries, &mut |entry| {
        usage.files += 1;
        let m = entry.meta;
        if m.nlink <= 1 || m.is_dir() || linked.insert((m.dev, m.ino)) {
            usage.bytes = usage.bytes.saturating_add(m.allocated);
        }
        true
    })?;
    if end.stopped {
        usage.files = usage.files.max(limits.max_files.saturating_add(1));
    }
    usage.unmeasurable = end.too_deep || end.unreadable;
    usage.at = Some(Instant::now());
    usage.cost = started.elapsed();
    Ok(usage)
}

/// A request's cap lowered to the runtime's, with a warning when lowered
/// (H8).
pub(crate) fn clamp<T: PartialOrd + Copy + std::fmt::Display>(
    asked: Option<T>,
    default: T,
    limit: T,
    field: &str,
    warnings: &mut Vec<String>,
) -> T {
    let wanted = asked.unwrap_or(default);
    if wanted > limit {
        if asked.is_some() {
            warnings.push(format!(
                "{field} {wanted} is above the runtime's limit; lowered to {limit}"
            ));
        }
        limit
    } else {
        wanted
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    // threat model: H8
    #[test]
    fn clamps_and_warns() {
        let mut w = Vec::new();
        assert_eq!(clamp(Some(10u64), 5, 100, "max_files", &mut w), 10);
        assert!(w.is_empty());
        assert_eq!(
            clamp(Some(1u64 << 30), 5, 100, "max_file_bytes", &mut w),
            100
        );
        assert_eq!(w.len(), 1);
        assert_eq!(clamp(None, 500u64, 100, "max_total_bytes", &mut w), 100);
        assert_eq!(w.len(), 1, "a default above the limit is lowered quietly");
    }

    // threat model: H7
    #[test]
    fn measures_bytes_files_and_hard_links_once() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/big"), vec![1u8; 1 << 20]).unwrap();
        std::fs::hard_link(root.join("a/b/big"), root.join("a/twin")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("a/link")).unwrap();
        let handle = DirHandle::open_path(root).unwrap();
        let usage = measure(&handle, &WorkspaceLimits::new()).unwrap();
        assert_eq!(usage.files, 5, "a, a/b, a/b/big, a/twin, a/link");
        assert!(
            usage.bytes >= 1 << 20 && usage.bytes < (2 << 20),
            "{}",
            usage.bytes
        );
        // A folder the runtime may not read hides nothing: as root it is
        // read anyway, otherwise it counts as over the cap.
        std::fs::create_dir(root.join("hidden")).unwrap();
        std::fs::write(root.join("hidden/blob"), vec![1u8; 1 << 20]).unwrap();
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(root.join("hidden"), std::fs::Permissions::from_mode(0o000))
                .unwrap();
        }
        let usage = measure(&handle, &WorkspaceLimits::new()).unwrap();
        if rustix::process::geteuid().is_root() {
            assert!(!usage.unmeasurable && usage.bytes >= 2 << 20, "{usage:?}");
        } else {
            assert!(
                usage.unmeasurable && usage.over(&WorkspaceLimits::new()),
                "{usage:?}"
            );
        }
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(root.join("hidden"), std::fs::Permissions::from_mode(0o700))
                .unwrap();
        }
        let small = WorkspaceLimits::new().max_bytes(1000).max_files(3);
        let usage = measure(&handle, &small).unwrap();
        assert!(usage.over(&small));
        assert_eq!(
            usage.error(&small, "run").kind(),
            WorkspaceErrorKind::LimitExceeded
        );
    }
}
