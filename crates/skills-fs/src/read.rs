//! Safe resource reads and resource listings (F-PRV-5, F-PRV-6).
//!
//! Every path a caller sends goes through three gates: the lexical rules of
//! [`ResourcePath::parse`] (no `..`, absolute paths, NUL, `\`, drive letters), then
//! canonicalization, then a containment check against the canonical skill folder,
//! so a symlink pointing outside the skill is refused even when its name is
//! harmless.

use std::path::{Path, PathBuf};

use skills_core::resource::text_content;
use skills_core::{
    Error, ErrorKind, LineRange, ResourceContent, ResourceEntry, ResourceListing, ResourcePath,
};

use crate::cache::Stamp;
use crate::options::FsOptions;
use crate::vfs::{RealFs, Vfs};

/// Hard stop for the listing walk, whatever `max_listed` says.
const LISTING_WALK_CAP: usize = 20_000;

/// Reads a resource of the skill in `skill_dir`.
///
/// # Errors
/// [`ErrorKind::InvalidPath`] for refused paths (including symlinks leading out of
/// the skill), [`ErrorKind::ResourceNotFound`] (listing what exists),
/// [`ErrorKind::TooLarge`], [`ErrorKind::Binary`], [`ErrorKind::InvalidRange`],
/// [`ErrorKind::Io`].
pub fn read_resource(
    skill_dir: &Path,
    raw_path: &str,
    range: Option<LineRange>,
    options: &FsOptions,
) -> Result<ResourceContent, Error> {
    read_resource_in(&RealFs, skill_dir, raw_path, range, options)
}

/// [`read_resource`] through the file system `vfs`.
///
/// # Errors
/// As [`read_resource`].
pub fn read_resource_in(
    vfs: &dyn Vfs,
    skill_dir: &Path,
    raw_path: &str,
    range: Option<LineRange>,
    options: &FsOptions,
) -> Result<ResourceContent, Error> {
    let path = ResourcePath::parse(raw_path)?;
    let target = resolve(vfs, skill_dir, &path, options)?;
    let meta = vfs.metadata(&target).map_err(|e| io_error(&path, e))?;
    if meta.is_dir() {
        return Err(Error::new(
            ErrorKind::ResourceNotFound,
            format!("`{path}` is a folder, not a file"),
        )
        .with_available(list_resources_in(vfs, skill_dir, options).paths()));
    }
    if !meta.is_file() {
        return Err(Error::new(
            ErrorKind::InvalidPath,
            format!("refused resource path `{path}`: it is not a regular file"),
        ));
    }
    if meta.len > options.max_resource_bytes {
        return Err(Error::new(
            ErrorKind::TooLarge,
            format!(
                "`{path}` is {} bytes; files over {} bytes are not read",
                meta.len, options.max_resource_bytes
            ),
        ));
    }
    let bytes = vfs
        .read(&target, options.max_resource_bytes)
        .map_err(|e| io_error(&path, e))?;
    text_content(path, &bytes, range, options.max_read_bytes)
}

/// Resolves `path` inside `skill_dir` and checks that the real target is inside it.
pub(crate) fn resolve(
    vfs: &dyn Vfs,
    skill_dir: &Path,
    path: &ResourcePath,
    options: &FsOptions,
) -> Result<PathBuf, Error> {
    let root = vfs.canonicalize(skill_dir).map_err(|e| {
        Error::new(
            ErrorKind::Io,
            format!(
                "the skill folder `{}` cannot be opened: {e}",
                skill_dir.display()
            ),
        )
        .with_source(e)
    })?;
    let joined = path.components().fold(root.clone(), |p, c| p.join(c));
    let target = match vfs.canonicalize(&joined) {
        Ok(target) => target,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // A dangling symlink is "not found" too: there is nothing to read.
            return Err(Error::new(
                ErrorKind::ResourceNotFound,
                format!("the skill has no file `{path}`"),
            )
            .with_available(list_resources_in(vfs, skill_dir, options).paths()));
        }
        Err(e) => return Err(io_error(path, e)),
    };
    if !target.starts_with(&root) {
        return Err(Error::new(
            ErrorKind::InvalidPath,
            format!(
                "refused resource path `{path}`: it resolves outside the skill folder (through a symlink)"
            ),
        ));
    }
    Ok(target)
}

fn io_error(path: &ResourcePath, e: std::io::Error) -> Error {
    Error::new(ErrorKind::Io, format!("cannot read `{path}`: {e}")).with_source(e)
}

/// Lists the files of the skill in `skill_dir`: sorted by group then path, dot
/// files and `SKILL.md` left out, symlinks leading outside the skill left out.
pub fn list_resources(skill_dir: &Path, options: &FsOptions) -> ResourceListing {
    list_resources_in(&RealFs, skill_dir, options)
}

/// [`list_resources`] through the file system `vfs`.
pub fn list_resources_in(vfs: &dyn Vfs, skill_dir: &Path, options: &FsOptions) -> ResourceListing {
    list_resources_stamped(vfs, skill_dir, options, None)
}

/// [`list_resources_in`]; with `stamps`, also records one stat per folder (taken
/// before it is read) and per listed file, so a later check can tell whether the
/// listing is still current without walking again.
pub(crate) fn list_resources_stamped(
    vfs: &dyn Vfs,
    skill_dir: &Path,
    options: &FsOptions,
    mut stamps: Option<&mut Vec<Stamp>>,
) -> ResourceListing {
    let mut entries = Vec::new();
    let Ok(root) = vfs.canonicalize(skill_dir) else {
        return ResourceListing::default();
    };
    if let Some(stamps) = stamps.as_deref_mut() {
        stamps.push(Stamp::new(&root, vfs.metadata(&root).ok()));
    }
    let mut pending: Vec<(PathBuf, String, usize)> = vec![(root.clone(), String::new(), 0)];
    let mut seen = 0usize;
    while let Some((dir, prefix, depth)) = pending.pop() {
        let Ok(read) = vfs.read_dir(&dir) else {
            continue;
        };
        for name in read {
            seen += 1;
            if seen > LISTING_WALK_CAP {
                break;
            }
            let Some(name) = name.to_str() else { continue };
            if name.starts_with('.') {
                continue;
            }
            if depth == 0 && (name == "SKILL.md" || name == "skill.md") {
                continue;
            }
            let rel = if prefix.is_empty() {
                name.to_owned()
            } else {
                format!("{prefix}/{name}")
            };
            let full = dir.join(name);
            let Ok(real) = vfs.canonicalize(&full) else {
                continue;
            };
            if !real.starts_with(&root) {
                continue;
            }
            let Ok(meta) = vfs.metadata(&real) else {
                continue;
            };
            if meta.is_dir() {
                if depth + 1 < options.max_listing_depth && real != root {
                    if let Some(stamps) = stamps.as_deref_mut() {
                        stamps.push(Stamp::new(&real, Some(meta)));
                    }
                    pending.push((full, rel, depth + 1));
                }
            } else if !meta.is_file() {
                continue;
            } else if let Ok(path) = ResourcePath::parse(&rel) {
                if let Some(stamps) = stamps.as_deref_mut() {
                    stamps.push(Stamp::new(&real, Some(meta)));
                }
                entries.push(ResourceEntry::new(path, Some(meta.len)));
            }
        }
    }
    ResourceListing::new(entries, options.max_listed)
}
