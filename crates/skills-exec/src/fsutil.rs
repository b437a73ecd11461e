//! File helpers shared by the runtimes: error conversion, the blocking pool,
//! opening files beneath the workspace by handle, and removal that never
//! leaves the workspace root.

use std::fs;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use skills_core::{WorkspaceError, WorkspaceErrorKind};

/// An I/O error as a workspace error, with what was being done.
pub(crate) fn io_error(what: impl std::fmt::Display, err: io::Error) -> WorkspaceError {
    WorkspaceError::new(WorkspaceErrorKind::Io, format!("{what}: {err}"))
}

/// Runs file work on tokio's blocking pool.
pub(crate) async fn blocking<T, F>(f: F) -> Result<T, WorkspaceError>
where
    F: FnOnce() -> Result<T, WorkspaceError> + Send + 'static,
    T: Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r,
        Err(e) => Err(WorkspaceError::new(
            WorkspaceErrorKind::Other,
            format!("blocking task failed: {e}"),
        )),
    }
}

/// `true` when `path` is `root` or lies below it, compared component by
/// component (both should be canonical).
pub(crate) fn is_within(root: &Path, path: &Path) -> bool {
    let mut r = root.components();
    let mut p = path.components();
    loop {
        match (r.next(), p.next()) {
            (None, _) => return true,
            (Some(a), Some(b)) if a == b => {}
            _ => return false,
        }
    }
}

/// What opening a file beneath the workspace found.
#[derive(Debug)]
pub(crate) enum Opened {
    /// A regular file: its size and up to `cap` bytes.
    File { size: u64, bytes: Vec<u8> },
    /// The path leads out of the root (a link pointing out, `..`).
    Outside,
    /// Not a regular file.
    NotRegular,
}

/// Opens `rel` beneath `root` by handle and reads at most `cap` bytes. Links
/// that stay inside are followed; anything leading out is [`Opened::Outside`].
pub(crate) fn open_beneath(root: &Path, rel: &str, cap: u64) -> io::Result<Opened> {
    let Some(file) = open_beneath_file(root, rel)? else {
        return Ok(Opened::Outside);
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Ok(Opened::NotRegular);
    }
    let mut bytes = Vec::with_capacity(meta.len().min(cap) as usize);
    file.take(cap).read_to_end(&mut bytes)?;
    Ok(Opened::File {
        size: meta.len(),
        bytes,
    })
}

#[cfg(target_os = "linux")]
fn open_beneath_file(root: &Path, rel: &str) -> io::Result<Option<fs::File>> {
    use rustix::fs::{Mode, OFlags, ResolveFlags, openat2};
    let dir = fs::File::open(root)?;
    let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY;
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
    match openat2(&dir, rel, flags, Mode::empty(), resolve) {
        Ok(fd) => Ok(Some(fs::File::from(fd))),
        Err(rustix::io::Errno::XDEV) => Ok(None),
        Err(rustix::io::Errno::NOSYS) | Err(rustix::io::Errno::PERM) => open_by_path(root, rel),
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(target_os = "linux"))]
fn open_beneath_file(root: &Path, rel: &str) -> io::Result<Option<fs::File>> {
    open_by_path(root, rel)
}

/// The fallback where `openat2` is missing: canonicalize and contain. Correct
/// for trees nobody changes concurrently.
fn open_by_path(root: &Path, rel: &str) -> io::Result<Option<fs::File>> {
    let root = root.canonicalize()?;
    let path = root.join(rel).canonicalize()?;
    if !is_within(&root, &path) {
        return Ok(None);
    }
    fs::File::open(path).map(Some)
}

/// Makes `path` (a file or folder) and everything below it writable by the
/// owner again, so it can be removed. Never follows links.
fn make_writable(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let Ok(meta) = fs::symlink_metadata(path) else {
            return;
        };
        if meta.file_type().is_symlink() {
            return;
        }
        let mode = meta.permissions().mode();
        if mode & 0o200 == 0 {
            let _ = fs::set_permissions(path, fs::Permissions::from_mode(mode | 0o700));
        }
        if meta.is_dir()
            && let Ok(entries) = fs::read_dir(path)
        {
            for entry in entries.flatten() {
                make_writable(&entry.path());
            }
        }
    }
}

/// Removes `path` (recursively, not following links) after checking that it
/// lies strictly below `root`. Read-only staged trees are made writable first.
pub(crate) fn remove_within(root: &Path, path: &Path) -> io::Result<bool> {
    if path == root
        || !is_within(root, path)
        || path.components().any(|c| matches!(c, Component::ParentDir))
    {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "refusing to remove {} (not below {})",
                path.display(),
                root.display()
            ),
        ));
    }
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
        Ok(meta) if !meta.is_dir() => {
            fs::remove_file(path)?;
            return Ok(true);
        }
        Ok(_) => {}
    }
    make_writable(path);
    fs::remove_dir_all(path)?;
    Ok(true)
}

/// Sets a file's or folder's permission bits.
pub(crate) fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (path, mode);
        Ok(())
    }
}

/// Creates a symbolic link.
pub(crate) fn symlink(target: &Path, link: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(target, link)
    }
    #[cfg(not(unix))]
    {
        let _ = (target, link);
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "symbolic links need Unix",
        ))
    }
}

/// A folder inside the workspace opened by handle, so files made in it stay
/// there even when a command renames or replaces a folder on the way (runs of
/// one session share the writable workspace).
#[cfg(unix)]
#[derive(Debug)]
pub(crate) struct DirHandle(std::os::fd::OwnedFd);

#[cfg(unix)]
impl DirHandle {
    /// Opens `root/rel` (`rel` relative, checked) one component at a time,
    /// never following a link.
    pub(crate) fn open(root: &Path, rel: &str) -> io::Result<Self> {
        use rustix::fs::{Mode, OFlags, openat};
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mut dir = openat(rustix::fs::CWD, root, flags, Mode::empty())?;
        for part in rel.split('/').filter(|p| !p.is_empty()) {
            if part == ".." || part == "." {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "not a plain path",
                ));
            }
            dir = openat(&dir, part, flags, Mode::empty())?;
        }
        Ok(Self(dir))
    }

    /// Creates the file `name` in this folder (it must not exist) with `mode`
    /// and writes `bytes` into it.
    pub(crate) fn write_new(&self, name: &str, bytes: &[u8], mode: u32) -> io::Result<()> {
        use rustix::fs::{Mode, OFlags, openat};
        use std::io::Write;
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = openat(&self.0, name, flags, Mode::from_raw_mode(mode))?;
        fs::File::from(fd).write_all(bytes)
    }
}

/// Joins a checked relative path (from
/// [`normalize_relative`](skills_core::normalize_relative)) to `root`.
pub(crate) fn join_rel(root: &Path, rel: &str) -> PathBuf {
    if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn within() {
        assert!(is_within(Path::new("/a/b"), Path::new("/a/b/c")));
        assert!(is_within(Path::new("/a/b"), Path::new("/a/b")));
        assert!(!is_within(Path::new("/a/b"), Path::new("/a/bc")));
        assert!(!is_within(Path::new("/a/b"), Path::new("/a")));
    }

    #[test]
    fn remove_refuses_outside() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        fs::create_dir(&root).unwrap();
        assert!(remove_within(&root, &root).is_err());
        assert!(remove_within(&root, dir.path()).is_err());
        assert!(remove_within(&root, &root.join("../x")).is_err());
        assert!(!remove_within(&root, &root.join("missing")).unwrap());
    }
}
