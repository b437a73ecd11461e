//! [`FsProvider`]: a [`SkillProvider`] over folders on disk, with a staleness
//! cache (F-PRV-4; see [`crate::cache`] and `docs/staleness.md`).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Instant;

use async_trait::async_trait;
use skills_core::provider::not_found;
use skills_core::{
    Catalog, Diagnostic, Error, ErrorKind, LineRange, ResourceContent, Skill, SkillProvider,
};

use crate::cache::{FsEnv, Stamp, all_unchanged};
use crate::discover::{Discovery, discover_watched, load_skill_dir_stamped};
use crate::options::FsOptions;
use crate::read::{list_resources_stamped, read_resource_in};
use crate::vfs::Vfs;

/// One immutable scan result. Readers hold an `Arc` to it, so a rescan never
/// shows them a half-built state.
#[derive(Debug, Default)]
struct Snapshot {
    catalog: Catalog,
    dirs: BTreeMap<String, PathBuf>,
    diagnostics: Vec<Diagnostic>,
    /// Roots, searched folders and skill folders, stat'ed before they were read.
    watched_dirs: Vec<Stamp>,
    /// Every `SKILL.md` read (checked only with `watch_skill_md`).
    skill_mds: Vec<Stamp>,
    /// The `SKILL.md` of each skill left out as unusable: always checked, so a
    /// fix made in place is noticed.
    broken_mds: Vec<Stamp>,
    /// A stat is too close to the scan time to be trusted: re-scan at the next check.
    racy: bool,
}

/// A skill as `get` last returned it, with the stats that show it is current.
#[derive(Debug)]
struct Loaded {
    dir: PathBuf,
    skill: Skill,
    /// Its `SKILL.md`, its folder, every folder and file of its listing.
    stamps: Vec<Stamp>,
    racy: bool,
    /// Nanoseconds after the provider's epoch when `stamps` were last confirmed.
    verified_at: AtomicU64,
}

/// Skills discovered under one or more root folders, cached.
///
/// Discovery happens in [`FsProvider::new`]. After that:
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
///   invalid returns an [`ErrorKind::InvalidSkill`] error with its diagnostics; a
///   change of name or metadata found this way makes the next check re-scan.
/// * [`FsProvider::rescan`] forces a scan.
///
/// The file-system calls are blocking and short; async servers with slow disks
/// may wrap calls in their runtime's blocking pool.
#[derive(Debug)]
pub struct FsProvider {
    roots: Vec<PathBuf>,
    options: FsOptions,
    env: FsEnv,
    snapshot: RwLock<Arc<Snapshot>>,
    /// Origin of `checked_at`.
    epoch: Instant,
    /// Nanoseconds after `epoch` when the snapshot was last known current.
    checked_at: AtomicU64,
    /// Bumped after each check or scan, so waiters know one happened.
    generation: AtomicU64,
    /// `get` saw the catalog is out of date: re-scan at the next check.
    dirty: AtomicBool,
    /// Held by the one caller checking or scanning.
    refresh: Mutex<()>,
    loaded: Mutex<HashMap<String, Arc<Loaded>>>,
}

impl FsProvider {
    /// Scans `roots` with `options`. Problems become diagnostics, never errors:
    /// an unreadable root or a bad skill does not stop the others.
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
        let roots: Vec<PathBuf> = roots.into_iter().map(Into::into).collect();
        let epoch = env.clock.now();
        let provider = Self {
            roots,
            options,
            env,
            snapshot: RwLock::new(Arc::new(Snapshot::default())),
            epoch,
            checked_at: AtomicU64::new(0),
            generation: AtomicU64::new(0),
            dirty: AtomicBool::new(false),
            refresh: Mutex::new(()),
            loaded: Mutex::new(HashMap::new()),
        };
        let snapshot = provider.scan().0;
        provider.swap(snapshot);
        provider
    }

    /// Scans again and swaps the result in atomically. Returns the full discovery
    /// report (per-skill diagnostics included).
    pub fn rescan(&self) -> Discovery {
        let _guard = lock(&self.refresh);
        let started = self.elapsed();
        self.dirty.store(false, Ordering::Release);
        let (snapshot, discovery) = self.scan();
        self.swap(snapshot);
        self.mark_checked(started);
        discovery
    }

    /// The roots this provider searches.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The options in use.
    pub fn options(&self) -> &FsOptions {
        &self.options
    }

    /// The file system and clock in use.
    pub fn env(&self) -> &FsEnv {
        &self.env
    }

    /// The folder of the skill named `name`, if discovered.
    pub fn skill_dir(&self, name: &str) -> Option<PathBuf> {
        self.fresh().dirs.get(name).cloned()
    }

    fn vfs(&self) -> &dyn Vfs {
        self.env.vfs.as_ref()
    }

    /// The current snapshot, no check.
    fn current(&self) -> Arc<Snapshot> {
        match self.snapshot.read() {
            Ok(guard) => Arc::clone(&guard),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    fn swap(&self, snapshot: Snapshot) {
        // Forget `get` results of skills that are gone or moved.
        lock(&self.loaded).retain(|name, loaded| snapshot.dirs.get(name) == Some(&loaded.dir));
        let snapshot = Arc::new(snapshot);
        match self.snapshot.write() {
            Ok(mut guard) => *guard = snapshot,
            Err(poisoned) => *poisoned.into_inner() = snapshot,
        }
    }

    /// Time since `epoch`, in nanoseconds.
    fn elapsed(&self) -> u64 {
        let elapsed = self.env.clock.now().saturating_duration_since(self.epoch);
        u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX)
    }

    fn within_cooldown(&self, now: u64) -> bool {
        let cooldown = u64::try_from(self.options.cooldown.as_nanos()).unwrap_or(u64::MAX);
        now.saturating_sub(self.checked_at.load(Ordering::Acquire)) < cooldown
    }

    fn mark_checked(&self, started: u64) {
        self.checked_at.store(started, Ordering::Release);
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    /// The snapshot, checked against the disk first if the cooldown has passed.
    fn fresh(&self) -> Arc<Snapshot> {
        if self.within_cooldown(self.elapsed()) {
            return self.current();
        }
        let seen = self.generation.load(Ordering::Acquire);
        let _guard = lock(&self.refresh);
        let started = self.elapsed();
        if self.generation.load(Ordering::Acquire) != seen || self.within_cooldown(started) {
            // Another caller checked while this one waited: reuse its result.
            return self.current();
        }
        let snapshot = self.current();
        let dirty = self.dirty.swap(false, Ordering::AcqRel);
        let stale = dirty
            || snapshot.racy
            || !all_unchanged(self.vfs(), &snapshot.watched_dirs)
            || !all_unchanged(self.vfs(), &snapshot.broken_mds)
            || (self.options.watch_skill_md && !all_unchanged(self.vfs(), &snapshot.skill_mds));
        if stale {
            let (snapshot, _) = self.scan();
            self.swap(snapshot);
        }
        self.mark_checked(started);
        self.current()
    }

    fn scan(&self) -> (Snapshot, Discovery) {
        let watched = discover_watched(self.vfs(), &self.roots, &self.options);
        let taken = self.env.clock.wall();
        let mut discovery = watched.discovery;
        let index = discovery.index_by_name();
        let mut dirs = BTreeMap::new();
        let mut metadata = Vec::with_capacity(index.len());
        for (name, i) in index {
            let skill = &discovery.skills[i];
            if let Some(doc) = &skill.document {
                metadata.push(doc.metadata.clone());
                dirs.insert(name, skill.dir.clone());
            }
        }
        let mut diagnostics = discovery.diagnostics.clone();
        for skill in &discovery.skills {
            diagnostics.extend(skill.diagnostics.iter().cloned());
        }
        let broken_mds: Vec<Stamp> = discovery
            .skills
            .iter()
            .zip(&watched.skill_mds)
            .filter(|(skill, _)| skill.document.is_none())
            .map(|(_, stamp)| stamp.clone())
            .collect();
        let racy = watched.dirs.iter().any(|s| s.is_racy(taken))
            || broken_mds.iter().any(|s| s.is_racy(taken))
            || (self.options.watch_skill_md && watched.skill_mds.iter().any(|s| s.is_racy(taken)));
        let snapshot = Snapshot {
            catalog: Catalog::new(metadata),
            dirs,
            diagnostics,
            watched_dirs: watched.dirs,
            skill_mds: watched.skill_mds,
            broken_mds,
            racy,
        };
        (snapshot, discovery)
    }

    fn dir_of(&self, name: &str) -> Result<(Arc<Snapshot>, PathBuf), Error> {
        let snapshot = self.fresh();
        match snapshot.dirs.get(name) {
            Some(dir) => {
                let dir = dir.clone();
                Ok((snapshot, dir))
            }
            None => Err(not_found(name, &snapshot.catalog)),
        }
    }

    /// The cached `get` result for `name`, if its stats show it is current.
    /// The skill `get` last returned, if still current: within the cooldown of its
    /// last confirmation without any file-system call, after it when one `stat`
    /// of each of its files shows nothing changed.
    fn cached(&self, name: &str, dir: &Path) -> Option<Skill> {
        let loaded = lock(&self.loaded).get(name).cloned()?;
        if loaded.dir != dir || loaded.racy {
            return None;
        }
        let now = self.elapsed();
        let cooldown = u64::try_from(self.options.cooldown.as_nanos()).unwrap_or(u64::MAX);
        if now.saturating_sub(loaded.verified_at.load(Ordering::Acquire)) < cooldown {
            return Some(loaded.skill.clone());
        }
        if all_unchanged(self.vfs(), &loaded.stamps) {
            loaded.verified_at.store(now, Ordering::Release);
            return Some(loaded.skill.clone());
        }
        None
    }

    fn forget(&self, name: &str) {
        lock(&self.loaded).remove(name);
        self.dirty.store(true, Ordering::Release);
    }
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
    load_skill_stamped(vfs, dir, options, None)
}

/// [`load_skill_in`]; with `stamps`, records the stats that show later whether
/// the result is still current.
pub(crate) fn load_skill_stamped(
    vfs: &dyn Vfs,
    dir: &Path,
    options: &FsOptions,
    mut stamps: Option<&mut Vec<Stamp>>,
) -> Result<Skill, Error> {
    let (found, md_stamp) = load_skill_dir_stamped(vfs, dir, options);
    if let Some(stamps) = stamps.as_deref_mut() {
        stamps.extend(md_stamp);
    }
    match found.document {
        Some(doc) => {
            let listing = list_resources_stamped(vfs, dir, options, stamps);
            let location = found
                .skill_md
                .map_or_else(|| dir.display().to_string(), |p| p.display().to_string());
            Ok(Skill::new(doc.metadata, doc.body, listing).with_location(location))
        }
        None => {
            let problems: Vec<String> = found
                .diagnostics
                .iter()
                .filter(|d| d.is_error())
                .map(ToString::to_string)
                .collect();
            Err(Error::new(
                ErrorKind::InvalidSkill,
                format!(
                    "the skill in `{}` is invalid: {}",
                    dir.display(),
                    problems.join("; ")
                ),
            ))
        }
    }
}

#[async_trait]
impl SkillProvider for FsProvider {
    async fn list(&self) -> Result<Catalog, Error> {
        Ok(self.fresh().catalog.clone())
    }

    async fn get(&self, name: &str) -> Result<Skill, Error> {
        let (snapshot, dir) = self.dir_of(name)?;
        if let Some(skill) = self.cached(name, &dir) {
            return Ok(skill);
        }
        let mut stamps = Vec::new();
        let loaded = load_skill_stamped(self.vfs(), &dir, &self.options, Some(&mut stamps));
        let skill = match loaded {
            Ok(skill) => skill,
            Err(err) => {
                // Broken since the scan: the catalog is out of date.
                self.forget(name);
                return Err(err);
            }
        };
        if skill.name() != name {
            // Renamed on disk since the last scan: the old name is gone.
            self.forget(name);
            return Err(not_found(name, &snapshot.catalog));
        }
        if snapshot.catalog.get(name) != Some(&skill.metadata) {
            self.dirty.store(true, Ordering::Release);
        }
        let taken = self.env.clock.wall();
        let racy = stamps.iter().any(|s| s.is_racy(taken));
        let entry = Arc::new(Loaded {
            dir,
            skill: skill.clone(),
            stamps,
            racy,
            verified_at: AtomicU64::new(self.elapsed()),
        });
        lock(&self.loaded).insert(name.to_owned(), entry);
        Ok(skill)
    }

    async fn read_resource(
        &self,
        name: &str,
        path: &str,
        range: Option<LineRange>,
    ) -> Result<ResourceContent, Error> {
        let (_, dir) = self.dir_of(name)?;
        read_resource_in(self.vfs(), &dir, path, range, &self.options)
    }

    async fn diagnostics(&self) -> Vec<Diagnostic> {
        self.fresh().diagnostics.clone()
    }
}
