//! `skills read --raw`: a skill file's bytes, unchanged, for scripts and assets.
//!
//! The text read path (`SkillProvider::read_resource`) refuses binary files. This
//! reads any regular file of the skill with the same containment rules:
//! the path must pass [`ResourcePath::parse`] (no `..`, absolute paths, NUL,
//! `\`), and the file actually opened must lie inside the skill folder. On Linux
//! the open itself enforces that (`openat2` with `RESOLVE_BENEATH`, so a
//! symlink swapped in while reading cannot lead out); elsewhere, or where
//! `openat2` is not available, the target is canonicalized and checked first.
//!
//! The libraries are getting a byte-read function of their own; this module is
//! the CLI's stopgap until then and should be replaced by it.

use std::fs::File;
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};

use skills_core::{Error, ErrorKind, ResourcePath};

/// Reads the file `raw_path` of the skill in `skill_dir`, at most `max_bytes`.
///
/// # Errors
/// [`ErrorKind::InvalidPath`] for refused paths and files outside the skill or
/// not regular files, [`ErrorKind::ResourceNotFound`] when there is no such
/// file, [`ErrorKind::TooLarge`] over `max_bytes`, [`ErrorKind::Io`] otherwise.
pub(crate) fn read_bytes(
    skill_dir: &Path,
    raw_path: &str,
    max_bytes: u64,
) -> Result<Vec<u8>, Error> {
    let path = ResourcePath::parse(raw_path)?;
    let root = skill_dir.canonicalize().map_err(|e| {
        Error::new(
            ErrorKind::Io,
            format!(
                "the skill folder `{}` cannot be opened: {e}",
                skill_dir.display()
            ),
        )
    })?;
    let file = open_inside(&root, &path)?;
    let meta = file.metadata().map_err(|e| io_error(&path, &e))?;
    if !meta.is_file() {
        return Err(not_a_file(&path));
    }
    if meta.len() > max_bytes {
        return Err(too_large(&path, meta.len(), max_bytes));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(&path, &e))?;
    if bytes.len() as u64 > max_bytes {
        // The file grew while it was read.
        return Err(too_large(&path, bytes.len() as u64, max_bytes));
    }
    tracing::debug!(path = %path, bytes = bytes.len(), "read raw resource");
    Ok(bytes)
}

/// `EXDEV`: what `openat2` with `RESOLVE_BENEATH` returns for an escape.
#[cfg(target_os = "linux")]
const EXDEV: i32 = 18;

fn escape_error(path: &ResourcePath) -> Error {
    Error::new(
        ErrorKind::InvalidPath,
        format!(
            "refused resource path `{path}`: it resolves outside the skill folder (through a symlink)"
        ),
    )
}

fn not_a_file(path: &ResourcePath) -> Error {
    Error::new(
        ErrorKind::InvalidPath,
        format!("refused resource path `{path}`: it is not a regular file"),
    )
}

fn open_error(path: &ResourcePath, e: &io::Error) -> Error {
    if e.kind() == io::ErrorKind::NotFound {
        Error::new(
            ErrorKind::ResourceNotFound,
            format!("the skill has no file `{path}`"),
        )
    } else {
        io_error(path, e)
    }
}

fn too_large(path: &ResourcePath, len: u64, max: u64) -> Error {
    Error::new(
        ErrorKind::TooLarge,
        format!("`{path}` is {len} bytes; files over {max} bytes are not read (see --max-bytes)"),
    )
}

fn io_error(path: &ResourcePath, e: &io::Error) -> Error {
    Error::new(ErrorKind::Io, format!("cannot read `{path}`: {e}"))
}

/// Opens `path` below the canonical folder `root`, never outside it.
fn open_inside(root: &Path, path: &ResourcePath) -> Result<File, Error> {
    #[cfg(target_os = "linux")]
    {
        match open_beneath(root, path) {
            Ok(file) => return Ok(file),
            // ENOSYS (kernel before 5.6), EPERM (filtered by seccomp): fall back.
            Err(e) if matches!(e.raw_os_error(), Some(38 | 1)) => {}
            Err(e) if e.raw_os_error() == Some(EXDEV) => return Err(escape_error(path)),
            Err(e) => return Err(open_error(path, &e)),
        }
    }
    open_checked(root, path)
}

#[cfg(target_os = "linux")]
fn open_beneath(root: &Path, path: &ResourcePath) -> io::Result<File> {
    use rustix::fs::{Mode, OFlags, ResolveFlags};
    let dir = rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let fd = rustix::fs::openat2(
        &dir,
        path.as_str(),
        // NONBLOCK: opening a FIFO must not hang; it is refused as not a file.
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK,
        Mode::empty(),
        ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
    )?;
    Ok(File::from(fd))
}

/// The portable fallback: canonicalize, check containment, open the result.
fn open_checked(root: &Path, path: &ResourcePath) -> Result<File, Error> {
    let joined = path
        .components()
        .fold(root.to_path_buf(), |p: PathBuf, c| p.join(c));
    let target = joined.canonicalize().map_err(|e| open_error(path, &e))?;
    if !target.starts_with(root) {
        return Err(escape_error(path));
    }
    let meta = std::fs::metadata(&target).map_err(|e| open_error(path, &e))?;
    if !meta.is_file() {
        // FIFOs and devices are not opened at all.
        return Err(not_a_file(path));
    }
    File::open(target).map_err(|e| open_error(path, &e))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::fs;

    use super::*;

    fn skill() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("skill");
        fs::create_dir_all(dir.join("assets")).unwrap();
        fs::write(dir.join("assets/a.bin"), b"\0\x01\x02").unwrap();
        fs::write(tmp.path().join("secret"), b"secret").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(tmp.path().join("secret"), dir.join("assets/out")).unwrap();
        let root = dir.canonicalize().unwrap();
        (tmp, root)
    }

    fn path(raw: &str) -> ResourcePath {
        ResourcePath::parse(raw).unwrap()
    }

    /// The portable fallback, which Linux uses only without `openat2`.
    #[test]
    fn the_fallback_keeps_reads_inside_the_skill() {
        let (_tmp, root) = skill();
        let mut file = open_checked(&root, &path("assets/a.bin")).unwrap();
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).unwrap();
        assert_eq!(bytes, b"\0\x01\x02");
        #[cfg(unix)]
        assert_eq!(
            open_checked(&root, &path("assets/out")).unwrap_err().kind(),
            ErrorKind::InvalidPath
        );
        assert_eq!(
            open_checked(&root, &path("assets")).unwrap_err().kind(),
            ErrorKind::InvalidPath
        );
        assert_eq!(
            open_checked(&root, &path("assets/none"))
                .unwrap_err()
                .kind(),
            ErrorKind::ResourceNotFound
        );
    }

    #[test]
    fn read_bytes_applies_the_cap() {
        let (_tmp, root) = skill();
        assert_eq!(read_bytes(&root, "assets/a.bin", 3).unwrap(), b"\0\x01\x02");
        assert_eq!(
            read_bytes(&root, "assets/a.bin", 2).unwrap_err().kind(),
            ErrorKind::TooLarge
        );
        #[cfg(unix)]
        assert_eq!(
            read_bytes(&root, "assets/out", 100).unwrap_err().kind(),
            ErrorKind::InvalidPath
        );
        assert_eq!(
            read_bytes(&root, "../secret", 100).unwrap_err().kind(),
            ErrorKind::InvalidPath
        );
    }

    /// A FIFO would block a plain `open`; it is refused without hanging.
    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_not_waited_on() {
        let (_tmp, root) = skill();
        let fifo = root.join("assets/pipe");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs");
        assert!(status.success());
        assert_eq!(
            read_bytes(&root, "assets/pipe", 100).unwrap_err().kind(),
            ErrorKind::InvalidPath
        );
        assert_eq!(
            open_checked(&root, &path("assets/pipe"))
                .unwrap_err()
                .kind(),
            ErrorKind::InvalidPath
        );
    }
}
