//! Safe resource reads and resource listings (F-PRV-5, F-PRV-6).
//!
//! Every path a caller sends goes through two gates: the lexical rules of
//! [`ResourcePath::parse`] (no `..`, absolute paths, NUL, `\`, drive letters),
//! then a handle-based open beneath the skill folder ([`Vfs::read_beneath`], see
//! [`crate::beneath`]) that refuses symlinks leading out, refuses anything but a
//! regular file before reading it, and checks the size on the file it reads.
//! A path is never checked and then opened again by name.
//!
//! The listing walks the skill folder in a fixed order (`references/`,
//! `scripts/`, `assets/`, then the rest; each folder in path order), so the same
//! folder always gives the same listing, and it says exactly whether the walk
//! was cut (see [`LISTING_WALK_CAP`]).

use std::collections::HashSet;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;

use skills_core::text_content;
use skills_core::{
    Error, ErrorKind, LineRange, ResourceBytes, ResourceContent, ResourceEntry, ResourceListing,
    ResourcePath,
};

use crate::beneath::Refusal;
use crate::cache::Stamp;
use crate::options::FsOptions;
use crate::vfs::{FileKind, FileStat, Vfs};

/// Hard stop for the listing walk, whatever `max_listed` says: at most this many
/// folder entries are looked at per skill.
pub const LISTING_WALK_CAP: usize = 20_000;

/// Reads a resource of the skill in `skill_dir` as text, through `vfs`.
pub(crate) fn read_resource_in(
    vfs: &dyn Vfs,
    skill_dir: &Path,
    raw_path: &str,
    range: Option<LineRange>,
    options: &FsOptions,
) -> Result<ResourceContent, Error> {
    let path = parse(skill_dir, raw_path)?;
    let bytes = read_checked(vfs, skill_dir, &path, options)?;
    text_content(path, &bytes, range, options.max_read_bytes).inspect_err(|err| {
        if err.kind() == ErrorKind::Binary {
            tracing::info!(skill = %skill_dir.display(), path = raw_path, "refused: binary file read as text");
        }
    })
}

/// Reads a resource of the skill in `skill_dir` as bytes, through `vfs`.
pub(crate) fn read_resource_bytes_in(
    vfs: &dyn Vfs,
    skill_dir: &Path,
    raw_path: &str,
    options: &FsOptions,
) -> Result<ResourceBytes, Error> {
    let path = parse(skill_dir, raw_path)?;
    let bytes = read_checked(vfs, skill_dir, &path, options)?;
    Ok(ResourceBytes::new(path, bytes))
}

/// Reads the "resource" `raw_path` of the single-file skill `file` as text:
/// only `SKILL.md`, the file itself, exists.
pub(crate) fn read_single_file_in(
    vfs: &dyn Vfs,
    file: &Path,
    raw_path: &str,
    range: Option<LineRange>,
    options: &FsOptions,
) -> Result<ResourceContent, Error> {
    let (path, bytes) = single_file_bytes(vfs, file, raw_path, options)?;
    text_content(path, &bytes, range, options.max_read_bytes)
}

/// [`read_single_file_in`] as bytes.
pub(crate) fn read_single_file_bytes_in(
    vfs: &dyn Vfs,
    file: &Path,
    raw_path: &str,
    options: &FsOptions,
) -> Result<ResourceBytes, Error> {
    let (path, bytes) = single_file_bytes(vfs, file, raw_path, options)?;
    Ok(ResourceBytes::new(path, bytes))
}

/// The bytes of the single-file skill `file`, for a read of `SKILL.md`;
/// any other path is refused: the skill has no other files. The file is read
/// by handle beneath its root folder, as discovery read it.
fn single_file_bytes(
    vfs: &dyn Vfs,
    file: &Path,
    raw_path: &str,
    options: &FsOptions,
) -> Result<(ResourcePath, Vec<u8>), Error> {
    let path = parse(file, raw_path)?;
    if path.as_str() != "SKILL.md" {
        tracing::info!(skill = %file.display(), path = %path, "refused: a single-file skill has no other files");
        return Err(Error::new(
            ErrorKind::ResourceNotFound,
            format!(
                "the skill has no file `{path}`: it is a single Markdown file (`{}`) with no folder of its own; only `SKILL.md` (that file) can be read",
                file.display()
            ),
        ));
    }
    let root = match file.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| ResourcePath::parse(n).ok())
        .ok_or_else(|| {
            Error::new(
                ErrorKind::Io,
                format!("`{}` has no usable file name", file.display()),
            )
        })?;
    match vfs.read_beneath(root, &name, options.max_resource_bytes) {
        Ok((_, bytes)) => Ok((path, bytes)),
        Err(err) => Err(match Refusal::of(&err) {
            Some(Refusal::TooLarge { len, cap }) => Error::new(
                ErrorKind::TooLarge,
                format!("`{path}` is {len} bytes; files over {cap} bytes are not read"),
            ),
            _ if err.kind() == io::ErrorKind::NotFound => Error::new(
                ErrorKind::ResourceNotFound,
                format!("the skill's file `{}` is gone", file.display()),
            ),
            _ => Error::new(
                ErrorKind::Io,
                format!("cannot read `{}`: {err}", file.display()),
            )
            .with_source(err),
        }),
    }
}

/// The location of a single-file skill: a `file:` URL of its Markdown file
/// (made absolute against the working directory), so that nothing takes it
/// for a skill folder's path.
pub(crate) fn single_file_location(file: &Path) -> String {
    let absolute = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    let text = absolute.to_string_lossy().replace('\\', "/");
    let mut url = String::from("file://");
    if !text.starts_with('/') {
        url.push('/');
    }
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&byte) {
            url.push(char::from(byte));
        } else {
            url.push_str(&format!("%{byte:02X}"));
        }
    }
    url
}

fn parse(skill_dir: &Path, raw_path: &str) -> Result<ResourcePath, Error> {
    ResourcePath::parse(raw_path).inspect_err(|err| {
        tracing::warn!(skill = %skill_dir.display(), path = %raw_path.escape_debug(), reason = %err, "refused resource path");
    })
}

/// One bounded read beneath the skill folder, errors mapped for callers.
fn read_checked(
    vfs: &dyn Vfs,
    skill_dir: &Path,
    path: &ResourcePath,
    options: &FsOptions,
) -> Result<Vec<u8>, Error> {
    let started = Instant::now();
    match vfs.read_beneath(skill_dir, path, options.max_resource_bytes) {
        Ok((_, bytes)) => {
            tracing::debug!(
                skill = %skill_dir.display(),
                path = %path,
                bytes = bytes.len(),
                elapsed_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
                "read resource"
            );
            Ok(bytes)
        }
        Err(err) => Err(read_error(vfs, skill_dir, path, err, options)),
    }
}

/// Turns a failed read into the error a caller sees (and logs refusals).
fn read_error(
    vfs: &dyn Vfs,
    skill_dir: &Path,
    path: &ResourcePath,
    err: io::Error,
    options: &FsOptions,
) -> Error {
    let skill = skill_dir.display();
    let refuse = |why: &str| {
        tracing::warn!(skill = %skill, path = %path, reason = why, "refused resource read");
        Error::new(
            ErrorKind::InvalidPath,
            format!("refused resource path `{path}`: {why}"),
        )
    };
    let not_found = |message: String| {
        Error::new(ErrorKind::ResourceNotFound, message)
            .with_available(list_resources_in(vfs, skill_dir, options).paths())
    };
    match Refusal::of(&err) {
        Some(Refusal::OutsideRoot) => {
            return refuse("it resolves outside the skill folder (through a symlink)");
        }
        Some(Refusal::NotRegular(FileKind::Dir)) => {
            return not_found(format!("`{path}` is a folder, not a file"));
        }
        Some(Refusal::NotRegular(_)) => {
            return refuse("it is not a regular file (a pipe, device or socket)");
        }
        Some(Refusal::TooLarge { len, cap }) => {
            tracing::warn!(skill = %skill, path = %path, bytes = len, cap, "refused resource read: too large");
            return Error::new(
                ErrorKind::TooLarge,
                format!("`{path}` is {len} bytes; files over {cap} bytes are not read"),
            );
        }
        None => {}
    }
    match err.kind() {
        // A dangling symlink is "not found" too: there is nothing to read.
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory => {
            not_found(format!("the skill has no file `{path}`"))
        }
        _ if is_link_loop(&err) => refuse("it goes through too many symbolic links"),
        _ => Error::new(ErrorKind::Io, format!("cannot read `{path}`: {err}")).with_source(err),
    }
}

/// `ELOOP`: a symlink loop (or too many links).
fn is_link_loop(err: &io::Error) -> bool {
    #[cfg(unix)]
    {
        err.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error())
    }
    #[cfg(not(unix))]
    {
        let _ = err;
        false
    }
}

/// The listing of the skill in `skill_dir`, through `vfs`.
pub(crate) fn list_resources_in(
    vfs: &dyn Vfs,
    skill_dir: &Path,
    options: &FsOptions,
) -> ResourceListing {
    list_resources_stamped(vfs, skill_dir, options, None)
}

/// Lists the files of the skill in `skill_dir`: sorted by group then path, dot
/// files and `SKILL.md` left out, symlinks leading outside the skill left out
/// (links inside are followed; a folder reached twice is listed once).
///
/// The walk is deterministic: `references/`, `scripts/` and `assets/` first
/// (the listing's group order), then the other entries; inside each folder,
/// names in byte order. It looks at [`LISTING_WALK_CAP`] entries at most; when
/// it stops there, the listing is marked `truncated` ("more than N not
/// listed"), otherwise `omitted` is exact.
///
/// With `stamps`, also records one stat per folder (taken before it is read)
/// and per listed file, so a later check can tell whether the listing is still
/// current without walking again.
pub(crate) fn list_resources_stamped(
    vfs: &dyn Vfs,
    skill_dir: &Path,
    options: &FsOptions,
    stamps: Option<&mut Vec<Stamp>>,
) -> ResourceListing {
    let _span = tracing::debug_span!("list_resources", skill = %skill_dir.display()).entered();
    let root = match vfs.stat_beneath(skill_dir, None) {
        Ok(stat) => stat,
        Err(err) => {
            tracing::debug!(error = %err, "the skill folder cannot be listed");
            return ResourceListing::default();
        }
    };
    let mut walk = ListWalk {
        vfs,
        root: skill_dir,
        options,
        files: Vec::new(),
        seen: 0,
        truncated: false,
        visited: HashSet::new(),
        stamps,
    };
    walk.stamp(skill_dir.to_path_buf(), root);
    if let Some(id) = root.file_id {
        walk.visited.insert(id);
    }
    walk.folder(None, 0);
    let found = walk.files.len();
    tracing::debug!(
        files = found,
        entries = walk.seen,
        truncated = walk.truncated,
        "listed"
    );
    ResourceListing::new(walk.files, options.max_listed).with_truncated(walk.truncated)
}

struct ListWalk<'a> {
    vfs: &'a dyn Vfs,
    root: &'a Path,
    options: &'a FsOptions,
    files: Vec<ResourceEntry>,
    /// Folder entries looked at so far.
    seen: usize,
    /// The walk stopped at [`LISTING_WALK_CAP`].
    truncated: bool,
    /// Folders listed (device, inode), so a folder reached twice is listed once.
    visited: HashSet<(u64, u64)>,
    stamps: Option<&'a mut Vec<Stamp>>,
}

/// The rank of a top-level name in the walk: the listing's group order.
fn group_rank(name: &str) -> u8 {
    match name {
        "references" => 0,
        "scripts" => 1,
        "assets" => 2,
        _ => 3,
    }
}

impl ListWalk<'_> {
    fn stamp(&mut self, path: PathBuf, stat: FileStat) {
        if let Some(stamps) = self.stamps.as_deref_mut() {
            stamps.push(Stamp::new(&path, Some(stat)));
        }
    }

    fn full_path(&self, rel: &ResourcePath) -> PathBuf {
        rel.components()
            .fold(self.root.to_path_buf(), |p, c| p.join(c))
    }

    /// Lists the folder `rel` (the skill folder for `None`) at `depth`.
    /// Returns `false` once the walk cap is reached.
    fn folder(&mut self, rel: Option<&ResourcePath>, depth: usize) -> bool {
        let mut names = match self.vfs.read_dir_beneath(self.root, rel) {
            Ok(names) => names,
            Err(err) => {
                tracing::debug!(folder = ?rel.map(ResourcePath::as_str), error = %err, "cannot list a folder");
                return true;
            }
        };
        names.sort();
        let mut children = Vec::new();
        for name in names {
            self.seen += 1;
            if self.seen > LISTING_WALK_CAP {
                self.truncated = true;
                break;
            }
            let Some(name) = name.to_str() else {
                tracing::debug!(name = ?name, "left out of the listing: not UTF-8");
                continue;
            };
            if name.starts_with('.') || (depth == 0 && (name == "SKILL.md" || name == "skill.md")) {
                continue;
            }
            let joined = match rel {
                Some(rel) => format!("{rel}/{name}"),
                None => name.to_owned(),
            };
            let Ok(path) = ResourcePath::parse(&joined) else {
                tracing::debug!(path = %joined.escape_debug(), "left out of the listing: not a valid resource path");
                continue;
            };
            let stat = match self.vfs.stat_beneath(self.root, Some(&path)) {
                Ok(stat) => stat,
                Err(err) => {
                    if Refusal::of(&err) == Some(&Refusal::OutsideRoot) {
                        tracing::info!(skill = %self.root.display(), path = %path, "left out of the listing: a symlink leading outside the skill");
                    }
                    continue;
                }
            };
            let rank = if depth == 0 { group_rank(name) } else { 3 };
            children.push((rank, path, stat));
        }
        // Files in byte order, each folder's files before the next folder's:
        // groups first at the top, then path order ("a.md" before "a/x").
        children.sort_by(|a, b| {
            let key = |(rank, path, stat): &(u8, ResourcePath, FileStat)| {
                let mut text = path.as_str().to_owned();
                if stat.is_dir() {
                    text.push('/');
                }
                (*rank, text)
            };
            key(a).cmp(&key(b))
        });
        let cut = self.truncated;
        for (_, path, stat) in children {
            if stat.is_file() {
                let full = self.full_path(&path);
                self.stamp(full, stat);
                self.files.push(ResourceEntry::new(path, Some(stat.len)));
            } else if stat.is_dir() {
                if cut || depth + 1 >= self.options.max_listing_depth {
                    continue;
                }
                if let Some(id) = stat.file_id
                    && !self.visited.insert(id)
                {
                    continue;
                }
                let full = self.full_path(&path);
                self.stamp(full, stat);
                if !self.folder(Some(&path), depth + 1) {
                    return false;
                }
            } else {
                tracing::info!(skill = %self.root.display(), path = %path, "left out of the listing: not a regular file");
            }
        }
        !cut
    }
}
