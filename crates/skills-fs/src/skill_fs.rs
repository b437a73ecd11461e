//! [`SkillFs`]: the file-system operations on skill folders (discovery, loading,
//! reads, listings) in one value, over any [`Vfs`].
//!
//! [`FsProvider`](crate::FsProvider) adds naming and caching on top; use
//! `SkillFs` directly for one-off work on folders (validators, tools, tests).
//!
//! ```no_run
//! use skills_fs::{FsOptions, SkillFs};
//! let fs = SkillFs::new(FsOptions::default());
//! let found = fs.discover(&["examples/skills".into()]);
//! for skill in &found.skills {
//!     println!("{}: {}", skill.dir.display(), skill.is_valid());
//! }
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use skills_core::{Error, LineRange, ResourceBytes, ResourceContent, ResourceListing, Skill};

use crate::discover::{
    DiscoveredSkill, Discovery, discover_in, find_skill_md_in, load_skill_dir_in,
};
use crate::options::FsOptions;
use crate::provider::load_skill_in;
use crate::read::{list_resources_in, read_resource_bytes_in, read_resource_in};
use crate::vfs::{RealFs, Vfs};

/// Discovery, loading, reads and listings of skill folders, with one set of
/// [`FsOptions`] and one file system.
#[derive(Debug, Clone)]
pub struct SkillFs {
    vfs: Arc<dyn Vfs>,
    options: FsOptions,
}

impl Default for SkillFs {
    fn default() -> Self {
        Self::new(FsOptions::default())
    }
}

impl SkillFs {
    /// On the real file system ([`RealFs`]).
    pub fn new(options: FsOptions) -> Self {
        Self::with_vfs(Arc::new(RealFs), options)
    }

    /// On the file system `vfs` (a fake one in tests, or an embedder's own).
    pub fn with_vfs(vfs: Arc<dyn Vfs>, options: FsOptions) -> Self {
        Self { vfs, options }
    }

    /// The options in use.
    pub fn options(&self) -> &FsOptions {
        &self.options
    }

    /// The file system in use.
    pub fn vfs(&self) -> &Arc<dyn Vfs> {
        &self.vfs
    }

    /// Finds and parses every skill under `roots`.
    pub fn discover(&self, roots: &[PathBuf]) -> Discovery {
        discover_in(self.vfs.as_ref(), roots, &self.options)
    }

    /// The `SKILL.md` of the folder `dir` (`skill.md` as a fallback).
    pub fn find_skill_md(&self, dir: &Path) -> Option<PathBuf> {
        find_skill_md_in(self.vfs.as_ref(), dir)
    }

    /// Reads and parses the skill folder `dir`, with its diagnostics.
    pub fn load_skill_dir(&self, dir: &Path) -> DiscoveredSkill {
        load_skill_dir_in(self.vfs.as_ref(), dir, &self.options)
    }

    /// Loads the skill folder `dir` into a [`Skill`] (body and listing).
    ///
    /// # Errors
    /// [`ErrorKind::InvalidSkill`](skills_core::ErrorKind::InvalidSkill) when
    /// the folder holds no usable skill.
    pub fn load_skill(&self, dir: &Path) -> Result<Skill, Error> {
        load_skill_in(self.vfs.as_ref(), dir, &self.options)
    }

    /// Reads the resource `path` of the skill in `dir` as text (optionally a
    /// line range), by handle beneath the folder.
    ///
    /// # Errors
    /// [`ErrorKind::InvalidPath`] for refused paths (including symlinks leading
    /// out of the skill and files that are not regular),
    /// [`ErrorKind::ResourceNotFound`] (listing what exists),
    /// [`ErrorKind::TooLarge`], [`ErrorKind::Binary`],
    /// [`ErrorKind::InvalidRange`], [`ErrorKind::Io`].
    ///
    /// [`ErrorKind::InvalidPath`]: skills_core::ErrorKind::InvalidPath
    /// [`ErrorKind::ResourceNotFound`]: skills_core::ErrorKind::ResourceNotFound
    /// [`ErrorKind::TooLarge`]: skills_core::ErrorKind::TooLarge
    /// [`ErrorKind::Binary`]: skills_core::ErrorKind::Binary
    /// [`ErrorKind::InvalidRange`]: skills_core::ErrorKind::InvalidRange
    /// [`ErrorKind::Io`]: skills_core::ErrorKind::Io
    pub fn read_resource(
        &self,
        dir: &Path,
        path: &str,
        range: Option<LineRange>,
    ) -> Result<ResourceContent, Error> {
        read_resource_in(self.vfs.as_ref(), dir, path, range, &self.options)
    }

    /// Reads the resource `path` of the skill in `dir` as raw bytes (images,
    /// archives, any file), with the same checks and the same size cap
    /// ([`FsOptions::max_resource_bytes`]) as [`SkillFs::read_resource`], and a
    /// MIME type guessed from the extension ([`skills_core::guess_mime`]).
    ///
    /// # Errors
    /// As [`SkillFs::read_resource`], except that binary content is not an error.
    pub fn read_resource_bytes(&self, dir: &Path, path: &str) -> Result<ResourceBytes, Error> {
        read_resource_bytes_in(self.vfs.as_ref(), dir, path, &self.options)
    }

    /// The files of the skill in `dir`: grouped, sorted, capped (see
    /// [`FsOptions::max_listed`]), with an exact note of what was left out.
    pub fn list_resources(&self, dir: &Path) -> ResourceListing {
        list_resources_in(self.vfs.as_ref(), dir, &self.options)
    }
}
