//! [`FsProvider`]: a [`SkillProvider`] over folders on disk.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use async_trait::async_trait;
use skills_core::provider::not_found;
use skills_core::{
    Catalog, Diagnostic, Error, ErrorKind, LineRange, ResourceContent, Skill, SkillProvider,
};

use crate::discover::{Discovery, discover, load_skill_dir};
use crate::options::FsOptions;
use crate::read::{list_resources, read_resource};

/// One immutable scan result. Readers hold an `Arc` to it, so a rescan never
/// shows them a half-built state.
#[derive(Debug, Default)]
struct Snapshot {
    catalog: Catalog,
    dirs: BTreeMap<String, PathBuf>,
    diagnostics: Vec<Diagnostic>,
}

/// Skills discovered under one or more root folders.
///
/// Discovery happens in [`FsProvider::new`] and again on [`FsProvider::rescan`].
/// `get` always re-reads the skill's `SKILL.md`, so a body edited on disk is
/// returned fresh; a skill that became invalid returns an
/// [`ErrorKind::InvalidSkill`] error with its diagnostics.
///
/// The file-system calls are blocking and short (one folder, one file); async
/// servers with slow disks may wrap calls in their runtime's blocking pool.
#[derive(Debug)]
pub struct FsProvider {
    roots: Vec<PathBuf>,
    options: FsOptions,
    snapshot: RwLock<Arc<Snapshot>>,
}

impl FsProvider {
    /// Scans `roots` with `options`. Problems become diagnostics, never errors:
    /// an unreadable root or a bad skill does not stop the others.
    pub fn new<I, P>(roots: I, options: FsOptions) -> Self
    where
        I: IntoIterator<Item = P>,
        P: Into<PathBuf>,
    {
        let roots: Vec<PathBuf> = roots.into_iter().map(Into::into).collect();
        let snapshot = scan(&roots, &options).0;
        Self {
            roots,
            options,
            snapshot: RwLock::new(Arc::new(snapshot)),
        }
    }

    /// Scans again and swaps the result in atomically. Returns the full discovery
    /// report (per-skill diagnostics included).
    pub fn rescan(&self) -> Discovery {
        let (snapshot, discovery) = scan(&self.roots, &self.options);
        let snapshot = Arc::new(snapshot);
        match self.snapshot.write() {
            Ok(mut guard) => *guard = snapshot,
            Err(poisoned) => *poisoned.into_inner() = snapshot,
        }
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

    /// The folder of the skill named `name`, if discovered.
    pub fn skill_dir(&self, name: &str) -> Option<PathBuf> {
        self.current().dirs.get(name).cloned()
    }

    fn current(&self) -> Arc<Snapshot> {
        match self.snapshot.read() {
            Ok(guard) => Arc::clone(&guard),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    fn dir_of(&self, name: &str) -> Result<(Arc<Snapshot>, PathBuf), Error> {
        let snapshot = self.current();
        match snapshot.dirs.get(name) {
            Some(dir) => {
                let dir = dir.clone();
                Ok((snapshot, dir))
            }
            None => Err(not_found(name, &snapshot.catalog)),
        }
    }
}

fn scan(roots: &[PathBuf], options: &FsOptions) -> (Snapshot, Discovery) {
    let mut discovery = discover(roots, options);
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
    let snapshot = Snapshot {
        catalog: Catalog::new(metadata),
        dirs,
        diagnostics,
    };
    (snapshot, discovery)
}

/// Loads one skill folder into a [`Skill`] (body and listing), re-reading it.
pub fn load_skill(dir: &Path, options: &FsOptions) -> Result<Skill, Error> {
    let found = load_skill_dir(dir, options);
    match found.document {
        Some(doc) => {
            let listing = list_resources(dir, options);
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
        Ok(self.current().catalog.clone())
    }

    async fn get(&self, name: &str) -> Result<Skill, Error> {
        let (snapshot, dir) = self.dir_of(name)?;
        let skill = load_skill(&dir, &self.options)?;
        if skill.name() != name {
            // Renamed on disk since the last scan: the old name is gone.
            return Err(not_found(name, &snapshot.catalog));
        }
        Ok(skill)
    }

    async fn read_resource(
        &self,
        name: &str,
        path: &str,
        range: Option<LineRange>,
    ) -> Result<ResourceContent, Error> {
        let (_, dir) = self.dir_of(name)?;
        read_resource(&dir, path, range, &self.options)
    }

    async fn diagnostics(&self) -> Vec<Diagnostic> {
        self.current().diagnostics.clone()
    }
}
