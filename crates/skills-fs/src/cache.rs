//! The staleness cache (F-PRV-4): clocks, the injectable environment of a provider
//! and the stamps that tell whether anything changed on disk.
//!
//! How it works (see `docs/staleness.md` for the whole story):
//! * A scan records one [`FileStat`] per folder it looked into (roots, folders it
//!   searched, skill folders) and, with [`FsOptions::watch_skill_md`], per
//!   `SKILL.md`. Those stats come from calls discovery makes anyway.
//! * Within [`FsOptions::cooldown`] of the last check, `list` and the name lookup of
//!   `get`/`read_resource` make no file-system call at all.
//! * After the cooldown, the first caller stats every recorded path once and
//!   re-scans only when one differs; callers arriving meanwhile wait for it and
//!   reuse its result.
//! * A stat whose modification time lies within [`RACY_WINDOW`] of the moment it
//!   was taken is "racy": a second change in the same timestamp tick would leave
//!   it equal. A snapshot holding a racy stat is re-scanned at the next check, and
//!   a racy `get` result is re-read at the next `get`.
//!
//! Test seams: [`FsEnv`] swaps the file system and the clock. The clock that
//! moves only when told to, `ManualClock`, exists only with the cargo feature
//! `testing` (the crate's own tests and benches turn it on).
//!
//! [`FsOptions::watch_skill_md`]: crate::FsOptions::watch_skill_md
//! [`FsOptions::cooldown`]: crate::FsOptions::cooldown

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
#[cfg(feature = "testing")]
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use crate::vfs::{FileStat, RealFs, Vfs};

/// How close to "now" a recorded modification time must be for the record to be
/// distrusted. Two seconds covers the coarsest common timestamps (FAT) and the
/// lag between the kernel's coarse file clock and the fine system clock.
pub const RACY_WINDOW: Duration = Duration::from_secs(2);

/// Where the provider gets the time from.
pub trait Clock: Send + Sync + fmt::Debug {
    /// A monotonic instant, for the cooldown.
    fn now(&self) -> Instant;

    /// The wall-clock time, compared with file modification times to spot racy
    /// stats. Defaults to [`SystemTime::now`].
    fn wall(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// The system clocks ([`Instant::now`], [`SystemTime::now`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that moves only when told to, for tests: its instant starts at the real
/// one and advances by [`ManualClock::advance`] only.
///
/// Its wall time stays the real one, because file modification times are real:
/// a file written a moment ago is still racy however far the clock is advanced.
/// Tests that want settled files set their modification times in the past.
///
/// Only with the cargo feature `testing`.
#[cfg(feature = "testing")]
#[derive(Debug)]
pub struct ManualClock {
    start: Instant,
    offset: Mutex<Duration>,
}

#[cfg(feature = "testing")]
impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(feature = "testing")]
impl ManualClock {
    /// A clock reading the real time now.
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
            offset: Mutex::new(Duration::ZERO),
        }
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        match self.offset.lock() {
            Ok(mut offset) => *offset += by,
            Err(poisoned) => *poisoned.into_inner() += by,
        }
    }

    fn offset(&self) -> Duration {
        match self.offset.lock() {
            Ok(offset) => *offset,
            Err(poisoned) => *poisoned.into_inner(),
        }
    }
}

#[cfg(feature = "testing")]
impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.start + self.offset()
    }
}

/// The world a provider sees: its file system and its clock.
#[derive(Debug, Clone)]
pub struct FsEnv {
    /// Every file-system call goes through this (default [`RealFs`]).
    pub vfs: Arc<dyn Vfs>,
    /// The time source for the cooldown and racy-stat checks (default [`SystemClock`]).
    pub clock: Arc<dyn Clock>,
}

impl Default for FsEnv {
    fn default() -> Self {
        Self {
            vfs: Arc::new(RealFs),
            clock: Arc::new(SystemClock),
        }
    }
}

impl FsEnv {
    /// Sets the file system.
    #[must_use]
    pub fn with_vfs(mut self, vfs: Arc<dyn Vfs>) -> Self {
        self.vfs = vfs;
        self
    }

    /// Sets the clock.
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }
}

/// A path and what one `stat` said about it (`None`: it could not be stat'ed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stamp {
    pub(crate) path: PathBuf,
    pub(crate) stat: Option<FileStat>,
}

impl Stamp {
    pub(crate) fn new(path: &Path, stat: Option<FileStat>) -> Self {
        Self {
            path: path.to_path_buf(),
            stat,
        }
    }

    /// Stats the path again (one `stat`) and compares.
    pub(crate) fn unchanged(&self, vfs: &dyn Vfs) -> bool {
        vfs.metadata(&self.path).ok() == self.stat
    }

    /// `true` when a change in the same timestamp tick could go unseen: the
    /// recorded modification time is within [`RACY_WINDOW`] of `taken` (or after
    /// it). A later change always moves the modification time to "now", so an old
    /// one cannot be matched by accident.
    pub(crate) fn is_racy(&self, taken: SystemTime) -> bool {
        let Some(modified) = self.stat.as_ref().and_then(|s| s.modified) else {
            return false;
        };
        modified + RACY_WINDOW > taken
    }
}

/// `true` when every stamp is unchanged; stops at the first difference.
pub(crate) fn all_unchanged<'a>(
    vfs: &dyn Vfs,
    stamps: impl IntoIterator<Item = &'a Stamp>,
) -> bool {
    stamps.into_iter().all(|s| s.unchanged(vfs))
}
