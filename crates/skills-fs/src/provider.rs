//! [`FsProvider`]: a [`SkillProvider`] over folders on disk, with a staleness
//! cache (F-PRV-4; see [`crate::cache`] and `docs/staleness.md`), that never
//! blocks the workers of an async runtime.
//!
//! # Async model
//! * Every file-system step (scan, staleness check, `get` re-read, resource
//!   read) runs on tokio's blocking pool (`spawn_blocking`) when the caller is
//!   inside a tokio runtime, so a 50–85 ms rescan of 3 000 skills or a 16 MiB
//!   read never parks a worker thread.
//! * Outside a runtime (no [`tokio::runtime::Handle::try_current`], e.g. under
//!   `pollster::block_on`, as the CLI does) the same work runs inline on the
//!   calling thread: nothing panics for want of a runtime.
//! * Refreshes are single-flight: one check or scan at a time, under an async
//!   mutex whose guard travels into the blocking task (a caller that gives up
//!   waiting does not release it early). Callers arriving meanwhile wait for it
//!   and reuse its result.
//! * The snapshot sits in an [`ArcSwap`]: readers inside the cooldown load it
//!   without any lock, also while a rescan runs; a new scan is swapped in whole.
//! * No `std` mutex is held across a scan or an `.await`: the only one guards
//!   the map of `get` results and is held for one map operation.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use arc_swap::ArcSwap;
use async_trait::async_trait;
use skills_core::{
    Catalog, Code, Diagnostic, Error, ErrorKind, LineRange, ResourceBytes, ResourceContent, Skill,
    SkillProvider,
};
use tracing::{Instrument, debug_span, field};

use crate::cache::{FsEnv, Stamp, all_unchanged};
use crate::discover::{
    DiscoveredSkill, Discovery, discover_watched_with, load_skill_dir_stamped,
    load_skill_file_stamped,
};
use crate::openai_yaml::{self, AgentsHint};
use crate::options::FsOptions;
use crate::read::{
    list_resources_stamped, read_resource_bytes_in, read_resource_in, read_single_file_bytes_in,
    read_single_file_in, single_file_location,
};
use crate::vfs::Vfs;

/// One immutable scan result. Readers hold an `Arc` to it, so a rescan never
/// shows them a half-built state.
#[derive(Debug, Default)]
struct Snapshot {
    catalog: Catalog,
    /// Each skill's folder; for a single-file skill, its file.
    dirs: BTreeMap<String, PathBuf>,
    /// The names of the single-file skills.
    single_files: BTreeSet<String>,
    diagnostics: Vec<Diagnostic>,
    /// Roots, searched folders and skill folders, stat'ed before they were read.
    watched_dirs: Vec<Stamp>,
    /// Every `SKILL.md` read (checked only with `watch_skill_md`).
    skill_mds: Vec<Stamp>,
    /// The `SKILL.md` of each skill left out as unusable: always checked, so a
    /// fix made in place is noticed.
    broken_mds: Vec<Stamp>,
    /// `agents/openai.yaml` of each skill with an `agents/` folder (absent or
    /// not): always checked.
    sidecars: Vec<Stamp>,
    /// A stat is too close to the scan time to be trusted: re-scan at the next check.
    racy: bool,
}

/// A skill as `get` last returned it, with the stats that show it is current.
#[derive(Debug)]
struct Loaded {
    dir: PathBuf,
    skill: Arc<Skill>,
    /// Its `SKILL.md`, its folder, every folder and file of its listing.
    stamps: Vec<Stamp>,
    racy: bool,
    /// Nanoseconds after the provider's epoch when `stamps` were last confirmed.
    verified_at: AtomicU64,
}

/// What the `get` cache can say without touching the disk.
#[derive(Debug)]
enum Cached {
    /// Confirmed within the cooldown: serve it.
    Fresh(Arc<Skill>),
    /// Known, but its stats must be checked first (file-system calls).
    Verify(Arc<Loaded>),
    /// Not cached (or racy, or moved): read the skill.
    Miss,
}

/// Skills discovered under one or more root folders, cached.
///
/// Discovery happens in [`FsProvider::new`] (blocking) or
/// [`FsProvider::open`] (async). After that:
/// * `list`, `diagnostics` and the name lookup of `get`/`read_resource` use an
///   immutable snapshot and make **no** file-system call within
///   [`FsOptions::cooldown`] (2 s by default) of the last check.
/// * After the cooldown, the next call stats each root, searched folder and skill
///   folder once (and each `SKILL.md` with [`FsOptions::watch_skill_md`]) and
///   re-scans only if one changed. Concurrent callers share that check and scan.
/// * `get` returns the skill it last returned without any file-system call within
///   the cooldown of its last confirmation; after it, one `stat` of its
///   `SKILL.md` and of each folder and file of its listing decides, and a change
///   makes it re-read the skill, so an edited body is returned. A skill that became
///   invalid returns an [`ErrorKind::InvalidSkill`] error with its diagnostics,
///   one whose `SKILL.md` is gone [`ErrorKind::SkillNotFound`]; a change of name
///   or metadata found this way makes the next check re-scan.
/// * [`FsProvider::rescan`] forces a scan.
///
/// # Async runtimes
/// Inside a tokio runtime every file-system step runs on the blocking pool, so
/// the async methods never block a worker thread; outside one (for example
/// under `pollster::block_on`) they run the same steps inline. The blocking
/// constructors [`FsProvider::new`] and [`FsProvider::with_env`] scan on the
/// calling thread: in async code prefer [`FsProvider::open`]. Cloning an
/// `FsProvider` is cheap and shares its cache.
#[derive(Debug, Clone)]
pub struct FsProvider {
    inner: Arc<Inner>,
}

/// The shared state of an [`FsProvider`]; `'static` so blocking tasks can own it.
#[derive(Debug)]
struct Inner {
    roots: Vec<PathBuf>,
    options: FsOptions,
    env: FsEnv,
    snapshot: ArcSwap<Snapshot>,
    /// Origin of `checked_at`.
    epoch: Instant,
    /// Nanoseconds after `epoch` when the snapshot was last known current.
    checked_at: AtomicU64,
    /// Bumped after each check or scan, so waiters know one happened.
    generation: AtomicU64,
    /// `get` saw the catalog is out of date: re-scan at the next check.
    dirty: AtomicBool,
    /// Held by the one caller checking or scanning (single flight). Its guard is
    /// moved into the blocking task, so it is released when the work is done.
    refresh: Arc<tokio::sync::Mutex<()>>,
    /// `get` results by name. Held for one map operation at a time, never
    /// across file-system work or an `.await`.
    loaded: Mutex<HashMap<String, Arc<Loaded>>>,
    /// Run file-system work on the calling thread even inside a runtime (the
    /// behaviour before async support; for benchmarks).
    inline: AtomicBool,
}

impl FsProvider {
    /// Scans `roots` with `options`, on the calling thread. Problems become
    /// diagnostics, never errors: an unreadable root or a bad skill does not
    /// stop the others. In async code, prefer [`FsProvider::open`].
    pub fn new<I, P>(roots: I, options: FsOptions) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        Self::with_env(roots, options, FsEnv::default())
    }

    /// [`FsProvider::new`] with a given file system and clock (for tests, or a
    /// file system that is not `std::fs`).
    pub fn with_env<I, P>(roots: I, options: FsOptions, env: FsEnv) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        let provider = Self::unscanned(roots, options, env);
        provider.inner.initial_scan();
        provider
    }

    /// [`FsProvider::new`] without blocking the async runtime: the first scan
    /// runs on tokio's blocking pool (inline when called outside a runtime).
    pub async fn open<I, P>(roots: I, options: FsOptions) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        Self::open_with_env(roots, options, FsEnv::default()).await
    }

    /// [`FsProvider::open`] with a given file system and clock.
    pub async fn open_with_env<I, P>(roots: I, options: FsOptions, env: FsEnv) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        let provider = Self::unscanned(roots, options, env);
        let inner = Arc::clone(&provider.inner);
        provider
            .inner
            .blocking(move || inner.initial_scan())
            .instrument(debug_span!("skills_fs.open"))
            .await;
        provider
    }

    fn unscanned<I, P>(roots: I, options: FsOptions, env: FsEnv) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        let roots: Vec<PathBuf> = roots.into_iter().map(Into::into).collect();
        let epoch = env.clock.now();
        let inner = Inner {
            roots,
            options,
            env,
            snapshot: ArcSwap::from_pointee(Snapshot::default()),
            epoch,
            checked_at: AtomicU64::new(0),
            generation: AtomicU64::new(0),
            dirty: AtomicBool::new(false),
            refresh: Arc::new(tokio::sync::Mutex::new(())),
            loaded: Mutex::new(HashMap::new()),
            inline: AtomicBool::new(false),
        };
        Self {
            inner: Arc::new(inner),
        }
    }

    /// Scans again and swaps the result in atomically. Returns the full discovery
    /// report (per-skill diagnostics included).
    ///
    /// Waits for a check or scan already running, then scans (on the blocking
    /// pool inside a tokio runtime). Readers inside the cooldown keep being
    /// served the previous snapshot until the new one is swapped in.
    pub async fn rescan(&self) -> Discovery {
        let span = debug_span!("skills_fs.rescan", waited_us = field::Empty);
        async {
            let waiting = Instant::now();
            let guard = Arc::clone(&self.inner.refresh).lock_owned().await;
            tracing::Span::current().record("waited_us", micros(waiting));
            let inner = Arc::clone(&self.inner);
            self.inner
                .blocking(move || {
                    let _guard = guard;
                    inner.rescan_locked()
                })
                .await
        }
        .instrument(span)
        .await
    }

    /// The roots this provider searches.
    pub fn roots(&self) -> &[PathBuf] {
        &self.inner.roots
    }

    /// The options in use.
    pub fn options(&self) -> &FsOptions {
        &self.inner.options
    }

    /// The file system and clock in use.
    pub fn env(&self) -> &FsEnv {
        &self.inner.env
    }

    /// The folder of the skill named `name` in the current snapshot, if
    /// discovered; `None` also for a single-file skill, which has no folder
    /// (see [`FsProvider::skill_file`]). Makes no file-system call and never
    /// waits: it does not check the disk even after the cooldown (call `list`
    /// first for a checked answer).
    pub fn skill_dir(&self, name: &str) -> Option<PathBuf> {
        let snapshot = self.inner.current();
        if snapshot.single_files.contains(name) {
            return None;
        }
        snapshot.dirs.get(name).cloned()
    }

    /// The Markdown file of the single-file skill named `name` in the current
    /// snapshot (see [`FsOptions::single_file_skills`]); `None` for a folder
    /// skill or an unknown name. No file-system call, as
    /// [`FsProvider::skill_dir`].
    pub fn skill_file(&self, name: &str) -> Option<PathBuf> {
        let snapshot = self.inner.current();
        if !snapshot.single_files.contains(name) {
            return None;
        }
        snapshot.dirs.get(name).cloned()
    }

    /// With `true`, runs every file-system step on the calling thread even
    /// inside a tokio runtime, blocking its worker — the behaviour before async
    /// support. Only for benchmarks that measure the difference.
    #[cfg(feature = "testing")]
    pub fn set_inline_io(&self, inline: bool) {
        self.inner.inline.store(inline, Ordering::Relaxed);
    }

    /// [`SkillProvider::get`]: the cached skill itself, shared.
    ///
    /// Errors: [`ErrorKind::SkillNotFound`] (with the available names) for an
    /// unknown name, a skill renamed on disk, or one whose folder or `SKILL.md`
    /// went away, [`ErrorKind::InvalidSkill`] for a skill that became invalid
    /// since the last scan.
    async fn get_shared(&self, name: &str) -> Result<Arc<Skill>, Error> {
        let span = debug_span!(
            "skills_fs.get",
            skill = name,
            cached = field::Empty,
            elapsed_us = field::Empty
        );
        async {
            let started = Instant::now();
            let (snapshot, dir) = self.inner.dir_of(name).await?;
            let result = match self.inner.cached(name, &dir) {
                Cached::Fresh(skill) => Ok((skill, true)),
                cached => {
                    let inner = Arc::clone(&self.inner);
                    let name = name.to_owned();
                    self.inner
                        .blocking(move || inner.load(&name, &snapshot, dir, cached))
                        .await
                }
            };
            let span = tracing::Span::current();
            span.record("elapsed_us", micros(started));
            result.map(|(skill, cached)| {
                span.record("cached", cached);
                skill
            })
        }
        .instrument(span)
        .await
    }
}

impl Inner {
    fn vfs(&self) -> &dyn Vfs {
        self.env.vfs.as_ref()
    }

    /// Runs `work` on tokio's blocking pool when called inside a runtime (and
    /// `inline` is off), else on this thread. A panic in `work` is resumed here.
    /// If the runtime drops the task unstarted (it is shutting down), `work`
    /// runs inline instead, so it always runs exactly once.
    async fn blocking<T, F>(&self, work: F) -> T
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        if self.inline.load(Ordering::Relaxed) {
            return work();
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return work();
        };
        let slot = Arc::new(Mutex::new(Some(work)));
        let task_slot = Arc::clone(&slot);
        let span = tracing::Span::current();
        let joined = handle
            .spawn_blocking(move || {
                let work = lock(&task_slot).take();
                work.map(|work| span.in_scope(work))
            })
            .await;
        match joined {
            Ok(Some(value)) => value,
            Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
            // Cancelled before it started: the work is still in the slot.
            Ok(None) | Err(_) => {
                let work = lock(&slot).take();
                match work {
                    Some(work) => work(),
                    None => unreachable_work(),
                }
            }
        }
    }

    /// The current snapshot, no check.
    fn current(&self) -> Arc<Snapshot> {
        self.snapshot.load_full()
    }

    fn swap(&self, snapshot: Snapshot) {
        // Forget `get` results of skills that are gone or moved.
        lock(&self.loaded).retain(|name, loaded| snapshot.dirs.get(name) == Some(&loaded.dir));
        self.snapshot.store(Arc::new(snapshot));
    }

    /// Time since `epoch`, in nanoseconds.
    fn elapsed(&self) -> u64 {
        let elapsed = self.env.clock.now().saturating_duration_since(self.epoch);
        u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX)
    }

    fn cooldown(&self) -> u64 {
        u64::try_from(self.options.cooldown.as_nanos()).unwrap_or(u64::MAX)
    }

    fn within_cooldown(&self, now: u64) -> bool {
        now.saturating_sub(self.checked_at.load(Ordering::Acquire)) < self.cooldown()
    }

    fn mark_checked(&self, started: u64) {
        self.checked_at.store(started, Ordering::Release);
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// The first scan, before anyone else can see the provider.
    fn initial_scan(&self) {
        let (snapshot, _) = self.scan(false);
        self.swap(snapshot);
    }

    /// A forced scan; the caller holds `refresh`.
    fn rescan_locked(&self) -> Discovery {
        let started = self.elapsed();
        self.dirty.store(false, Ordering::Release);
        let (snapshot, discovery) = self.scan(true);
        self.swap(snapshot);
        self.mark_checked(started);
        discovery.unwrap_or_default()
    }

    /// The snapshot, checked against the disk first if the cooldown has passed.
    async fn fresh(self: &Arc<Self>) -> Arc<Snapshot> {
        if self.within_cooldown(self.elapsed()) {
            return self.current();
        }
        let span = debug_span!(
            "skills_fs.refresh",
            shared = field::Empty,
            waited_us = field::Empty
        );
        async {
            let seen = self.generation.load(Ordering::Acquire);
            let waiting = Instant::now();
            let guard = Arc::clone(&self.refresh).lock_owned().await;
            let span = tracing::Span::current();
            span.record("waited_us", micros(waiting));
            if self.generation.load(Ordering::Acquire) != seen
                || self.within_cooldown(self.elapsed())
            {
                // Another caller checked while this one waited: reuse its result.
                span.record("shared", true);
                return self.current();
            }
            span.record("shared", false);
            let inner = Arc::clone(self);
            self.blocking(move || {
                let _guard = guard;
                inner.check_locked()
            })
            .await
        }
        .instrument(span)
        .await
    }

    /// The staleness check, and a scan if it finds a change; the caller holds
    /// `refresh`.
    fn check_locked(&self) -> Arc<Snapshot> {
        let started = self.elapsed();
        let snapshot = self.current();
        let span = debug_span!(
            "skills_fs.staleness_check",
            result = field::Empty,
            elapsed_us = field::Empty
        );
        let stale = span.in_scope(|| {
            let timer = Instant::now();
            let dirty = self.dirty.swap(false, Ordering::AcqRel);
            let reason = if dirty {
                Some("dirty")
            } else if snapshot.racy {
                Some("racy")
            } else if !all_unchanged(self.vfs(), &snapshot.watched_dirs)
                || !all_unchanged(self.vfs(), &snapshot.broken_mds)
                || !all_unchanged(self.vfs(), &snapshot.sidecars)
                || (self.options.watch_skill_md && !all_unchanged(self.vfs(), &snapshot.skill_mds))
            {
                Some("changed")
            } else {
                None
            };
            span.record("result", reason.unwrap_or("unchanged"));
            span.record("elapsed_us", micros(timer));
            reason.is_some()
        });
        if stale {
            let (snapshot, _) = self.scan(false);
            self.swap(snapshot);
        }
        self.mark_checked(started);
        self.current()
    }

    /// Discovers the roots and builds a snapshot; also returns the full
    /// discovery when `report` is set (else the documents and diagnostics
    /// are moved into the snapshot, not copied).
    fn scan(&self, report: bool) -> (Snapshot, Option<Discovery>) {
        let span = debug_span!(
            "skills_fs.scan",
            roots = ?self.roots,
            skills = field::Empty,
            diagnostics = field::Empty,
            elapsed_us = field::Empty
        );
        let _entered = span.enter();
        let timer = Instant::now();
        // Only a report (`rescan`) hands the bodies out; the snapshot keeps
        // metadata.
        let watched = discover_watched_with(self.vfs(), &self.roots, &self.options, report);
        let taken = self.env.clock.wall();
        let mut discovery = watched.discovery;
        let index = discovery.index_by_name();
        // In name order (the index's): the map is built from sorted keys.
        let mut dirs = Vec::with_capacity(index.len());
        let mut single_files = BTreeSet::new();
        let mut metadata = Vec::with_capacity(index.len());
        let broken_mds: Vec<Stamp> = discovery
            .skills
            .iter()
            .zip(&watched.skill_mds)
            .filter(|(skill, _)| skill.document.is_none())
            .map(|(_, stamp)| stamp.clone())
            .collect();
        for (name, i) in index {
            let skill = &mut discovery.skills[i];
            let meta = if report {
                skill.document.as_ref().map(|doc| doc.metadata.clone())
            } else {
                skill.document.take().map(|doc| doc.metadata)
            };
            if let Some(meta) = meta {
                metadata.push(meta);
                if skill.single_file {
                    single_files.insert(name.clone());
                }
                let dir = if report {
                    skill.dir.clone()
                } else {
                    std::mem::take(&mut skill.dir)
                };
                dirs.push((name, dir));
            }
        }
        let dirs: BTreeMap<String, PathBuf> = dirs.into_iter().collect();
        let diagnostics = if report {
            let mut diagnostics = discovery.diagnostics.clone();
            for skill in &discovery.skills {
                diagnostics.extend(skill.diagnostics.iter().cloned());
            }
            diagnostics
        } else {
            let mut diagnostics = std::mem::take(&mut discovery.diagnostics);
            for skill in &mut discovery.skills {
                diagnostics.append(&mut skill.diagnostics);
            }
            diagnostics
        };
        let racy = watched.dirs.iter().any(|s| s.is_racy(taken))
            || broken_mds.iter().any(|s| s.is_racy(taken))
            || watched.sidecars.iter().any(|s| s.is_racy(taken))
            || (self.options.watch_skill_md && watched.skill_mds.iter().any(|s| s.is_racy(taken)));
        span.record("skills", dirs.len());
        span.record("diagnostics", diagnostics.len());
        span.record("elapsed_us", micros(timer));
        let snapshot = Snapshot {
            catalog: Catalog::new(metadata),
            dirs,
            single_files,
            diagnostics,
            watched_dirs: watched.dirs,
            skill_mds: watched.skill_mds,
            broken_mds,
            sidecars: watched.sidecars,
            racy,
        };
        (snapshot, report.then_some(discovery))
    }

    async fn dir_of(self: &Arc<Self>, name: &str) -> Result<(Arc<Snapshot>, PathBuf), Error> {
        let snapshot = self.fresh().await;
        match snapshot.dirs.get(name) {
            Some(dir) => {
                let dir = dir.clone();
                Ok((snapshot, dir))
            }
            None => Err(snapshot.catalog.not_found(name)),
        }
    }

    /// What the `get` cache holds for `name` in `dir`, without a file-system
    /// call: the skill if confirmed within the cooldown.
    fn cached(&self, name: &str, dir: &Path) -> Cached {
        let Some(loaded) = lock(&self.loaded).get(name).cloned() else {
            return Cached::Miss;
        };
        if loaded.dir != dir || loaded.racy {
            return Cached::Miss;
        }
        let now = self.elapsed();
        if now.saturating_sub(loaded.verified_at.load(Ordering::Acquire)) < self.cooldown() {
            return Cached::Fresh(Arc::clone(&loaded.skill));
        }
        Cached::Verify(loaded)
    }

    /// The file-system half of `get`: confirms a cached skill with one `stat`
    /// of each of its files, or (re-)reads it. Returns the skill and whether it
    /// came from the cache.
    fn load(
        &self,
        name: &str,
        snapshot: &Snapshot,
        dir: PathBuf,
        cached: Cached,
    ) -> Result<(Arc<Skill>, bool), Error> {
        if let Cached::Verify(loaded) = cached
            && all_unchanged(self.vfs(), &loaded.stamps)
        {
            loaded.verified_at.store(self.elapsed(), Ordering::Release);
            return Ok((Arc::clone(&loaded.skill), true));
        }
        let mut stamps = Vec::new();
        let single_file = snapshot.single_files.contains(name);
        let loaded = load_skill_stamped(
            self.vfs(),
            &dir,
            single_file,
            &self.options,
            Some(&mut stamps),
        );
        let mut skill = match loaded {
            Ok(skill) => skill,
            Err(failure) => {
                // Broken or removed since the scan: the catalog is out of date.
                self.forget(name);
                if failure.no_skill_md || self.vfs().metadata(&dir).is_err() {
                    // No SKILL.md when it was read (the folder was moved or
                    // deleted, even if something took its place since): the
                    // skill no longer exists.
                    return Err(snapshot.catalog.not_found(name));
                }
                return Err(failure.error);
            }
        };
        if skill.name() != name {
            // Renamed on disk since the last scan: the old name is gone.
            self.forget(name);
            return Err(snapshot.catalog.not_found(name));
        }
        // Read on its own, the folder does not know where it sits below its
        // root: the scan that found it does.
        skill.metadata.path = snapshot.catalog.get(name).and_then(|m| m.path.clone());
        if snapshot.catalog.get(name) != Some(&skill.metadata) {
            self.dirty.store(true, Ordering::Release);
        }
        let taken = self.env.clock.wall();
        let racy = stamps.iter().any(|s| s.is_racy(taken));
        let skill = Arc::new(skill);
        let entry = Arc::new(Loaded {
            dir,
            skill: Arc::clone(&skill),
            stamps,
            racy,
            verified_at: AtomicU64::new(self.elapsed()),
        });
        lock(&self.loaded).insert(name.to_owned(), entry);
        Ok((skill, false))
    }

    fn forget(&self, name: &str) {
        lock(&self.loaded).remove(name);
        self.dirty.store(true, Ordering::Release);
    }
}

/// Microseconds since `start`, for span fields.
impl FsProvider {
    /// Runs `read` for the file `path` of the skill `name` on the blocking pool
    /// (given the skill's folder, or its file and `true` for a single-file
    /// skill), recording `elapsed_us` and `bytes` (through `size`) on the
    /// current span.
    async fn read_in_skill<T, R>(
        &self,
        name: &str,
        path: &str,
        size: fn(&T) -> usize,
        read: R,
    ) -> Result<T, Error>
    where
        T: Send + 'static,
        R: FnOnce(&Inner, &Path, &str, bool) -> Result<T, Error> + Send + 'static,
    {
        let started = Instant::now();
        let (snapshot, dir) = self.inner.dir_of(name).await?;
        let inner = Arc::clone(&self.inner);
        let path = path.to_owned();
        let single_file = snapshot.single_files.contains(name);
        let result = self
            .inner
            .blocking(move || read(&inner, &dir, &path, single_file))
            .await;
        let span = tracing::Span::current();
        span.record("elapsed_us", micros(started));
        if let Ok(value) = &result {
            span.record("bytes", size(value));
        }
        result
    }
}

fn micros(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// The blocking task ran but found its work gone: impossible, because only the
/// task itself takes the work and it returns it as `Some`.
#[cold]
fn unreachable_work() -> ! {
    unreachable!("the blocking work was taken twice")
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    match mutex.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// Loads one skill folder into a [`Skill`] (body and listing), re-reading it,
/// through `vfs`.
///
/// # Errors
/// [`ErrorKind::InvalidSkill`] when the folder holds no usable skill.
pub(crate) fn load_skill_in(
    vfs: &dyn Vfs,
    dir: &Path,
    options: &FsOptions,
) -> Result<Skill, Error> {
    load_skill_stamped(vfs, dir, false, options, None).map_err(|failure| failure.error)
}

/// Why a skill folder did not load.
pub(crate) struct LoadFailure {
    /// The [`ErrorKind::InvalidSkill`] error with the folder's problems.
    pub(crate) error: Error,
    /// Whether the only problem was that there was no `SKILL.md` to read.
    pub(crate) no_skill_md: bool,
}

/// [`load_skill_in`] for the skill folder `dir`, or the single-file skill
/// `dir` when `single_file`; with `stamps`, records the stats that show later
/// whether the result is still current.
///
/// A single-file skill has no files: an empty listing, and as location a
/// `file:` URL of its Markdown file, not a path, so that nothing takes the
/// file for a skill folder (staging then ships its `SKILL.md` alone, see
/// `docs/providers.md`).
pub(crate) fn load_skill_stamped(
    vfs: &dyn Vfs,
    dir: &Path,
    single_file: bool,
    options: &FsOptions,
    mut stamps: Option<&mut Vec<Stamp>>,
) -> Result<Skill, LoadFailure> {
    // A folder's `agents/openai.yaml` is read after its listing, which tells
    // whether there is one: no extra call for the skills without.
    let (mut found, found_stamps): (DiscoveredSkill, Vec<Stamp>) = if single_file {
        load_skill_file_stamped(vfs, dir, options)
    } else {
        load_skill_dir_stamped(vfs, dir, AgentsHint::Absent, options)
    };
    if let Some(stamps) = stamps.as_deref_mut() {
        stamps.extend(found_stamps);
    }
    match found.document {
        Some(doc) if single_file => Ok(Skill::new(doc.metadata, doc.body, Default::default())
            .with_location(single_file_location(dir))),
        Some(mut doc) => {
            let listing = list_resources_stamped(vfs, dir, options, stamps.as_deref_mut());
            let sidecar = openai_yaml::apply(
                vfs,
                dir,
                AgentsHint::from_resources(&listing),
                &mut doc.metadata,
                &mut found.diagnostics,
            );
            if let Some(stamps) = stamps {
                stamps.extend(sidecar);
            }
            let location = found
                .skill_md
                .map_or_else(|| dir.display().to_string(), |p| p.display().to_string());
            Ok(Skill::new(doc.metadata, doc.body, listing).with_location(location))
        }
        None => {
            let errors: Vec<&Diagnostic> =
                found.diagnostics.iter().filter(|d| d.is_error()).collect();
            let no_skill_md =
                !errors.is_empty() && errors.iter().all(|d| d.code == Code::SkillMdMissing);
            let problems: Vec<String> = errors.iter().map(ToString::to_string).collect();
            Err(LoadFailure {
                error: Error::new(
                    ErrorKind::InvalidSkill,
                    format!(
                        "the skill in `{}` is invalid: {}",
                        dir.display(),
                        problems.join("; ")
                    ),
                ),
                no_skill_md,
            })
        }
    }
}

#[async_trait]
impl SkillProvider for FsProvider {
    async fn list(&self) -> Result<Catalog, Error> {
        let span = debug_span!("skills_fs.list", skills = field::Empty);
        async {
            let catalog = self.inner.fresh().await.catalog.clone();
            tracing::Span::current().record("skills", catalog.len());
            Ok(catalog)
        }
        .instrument(span)
        .await
    }

    /// The current catalog while it is confirmed within the cooldown; `None`
    /// once a staleness check is due (then `list` checks the disk).
    fn list_cached(&self) -> Option<Catalog> {
        self.inner
            .within_cooldown(self.inner.elapsed())
            .then(|| self.inner.current().catalog.clone())
    }

    async fn get(&self, name: &str) -> Result<Arc<Skill>, Error> {
        self.get_shared(name).await
    }

    async fn read_resource(
        &self,
        name: &str,
        path: &str,
        range: Option<LineRange>,
    ) -> Result<ResourceContent, Error> {
        let span = debug_span!(
            "skills_fs.read_resource",
            skill = name,
            path,
            bytes = field::Empty,
            elapsed_us = field::Empty
        );
        self.read_in_skill(
            name,
            path,
            |content: &ResourceContent| content.text.len(),
            move |inner, dir, path, single_file| {
                if single_file {
                    read_single_file_in(inner.vfs(), dir, path, range, &inner.options)
                } else {
                    read_resource_in(inner.vfs(), dir, path, range, &inner.options)
                }
            },
        )
        .instrument(span)
        .await
    }

    async fn read_resource_bytes(&self, name: &str, path: &str) -> Result<ResourceBytes, Error> {
        let span = debug_span!(
            "skills_fs.read_resource_bytes",
            skill = name,
            path,
            bytes = field::Empty,
            elapsed_us = field::Empty
        );
        self.read_in_skill(
            name,
            path,
            ResourceBytes::len,
            |inner, dir, path, single_file| {
                if single_file {
                    read_single_file_bytes_in(inner.vfs(), dir, path, &inner.options)
                } else {
                    read_resource_bytes_in(inner.vfs(), dir, path, &inner.options)
                }
            },
        )
        .instrument(span)
        .await
    }

    async fn diagnostics(&self) -> Vec<Diagnostic> {
        self.inner.fresh().await.diagnostics.clone()
    }
}
