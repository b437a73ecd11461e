//! Race-free access to the files of a skill folder: everything below the folder
//! is opened **by handle**, beneath an open handle of the folder itself, and a
//! checked path is never opened again by name.
//!
//! # How (Unix)
//! 1. The skill folder is opened once (`open(dir, O_DIRECTORY)`); the folder
//!    itself may be reached through symlinks, as configured.
//! 2. On Linux, the relative path is opened with `openat2(folder, path,
//!    RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`: the kernel refuses any step
//!    that would leave the folder (`..`, absolute symlinks, symlinks pointing
//!    out) atomically with the open.
//! 3. Where `openat2` is missing (old kernels, other Unix systems, or a seccomp
//!    filter answering `ENOSYS`/`EPERM`), a fallback walks the path component by
//!    component with `openat(O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)` relative to
//!    the handles it already holds; symlinks are followed by hand (their target
//!    is read with `readlinkat` and walked the same way), `..` steps back to the
//!    handle of the parent it came from and is refused at the folder itself, and
//!    absolute targets are refused. Both paths therefore accept the same links.
//! 4. The file is opened with `O_NONBLOCK`, then checked with `fstat` on the
//!    handle **before** any read: only regular files are read, so a FIFO, device
//!    or socket swapped in is refused without blocking, and the size cap is
//!    checked on the very file that is read. The read itself stops at the cap + 1.
//!
//! # Symlink rule
//! Symbolic links that stay inside the skill folder are followed — for resources,
//! for the listing and for `SKILL.md` itself. A link whose target leaves the
//! folder (through `..`, an absolute path or a mount point crossed by `..`) is
//! refused with [`Refusal::OutsideRoot`], whatever its name.
//!
//! # Elsewhere
//! On non-Unix targets, and for [`Vfs`] implementations that do not
//! override the `*_beneath` methods (fake file systems in tests), the same
//! checks are done on paths: canonicalize, require the result to be inside the
//! canonical folder, then stat and read the canonical path. That is correct for
//! a file system nobody changes while it is read, but not race-free.

use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use skills_core::ResourcePath;

use crate::vfs::{FileKind, FileStat, Vfs};

/// Why a path beneath a skill folder was refused. Carried inside the
/// [`io::Error`] returned by the `*_beneath` methods of [`Vfs`]; get it back with
/// [`Refusal::of`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The path leads outside the skill folder (a symlink pointing out, `..` at
    /// the top, an absolute symlink target).
    OutsideRoot,
    /// The file is not a regular file (a folder, FIFO, device or socket).
    NotRegular(FileKind),
    /// The file is larger than the cap.
    TooLarge {
        /// Its size.
        len: u64,
        /// The cap it exceeds.
        cap: u64,
    },
}

impl Refusal {
    /// Wraps the refusal in an [`io::Error`] of a fitting kind.
    pub fn into_io(self) -> io::Error {
        let kind = match &self {
            Refusal::OutsideRoot => io::ErrorKind::PermissionDenied,
            Refusal::NotRegular(FileKind::Dir) => io::ErrorKind::IsADirectory,
            Refusal::NotRegular(_) => io::ErrorKind::InvalidInput,
            Refusal::TooLarge { .. } => io::ErrorKind::FileTooLarge,
        };
        io::Error::new(kind, self)
    }

    /// The refusal inside `err`, if it carries one.
    pub fn of(err: &io::Error) -> Option<&Refusal> {
        err.get_ref()
            .and_then(|inner| inner.downcast_ref::<Refusal>())
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::OutsideRoot => f.write_str("the path leads outside the skill folder"),
            Refusal::NotRegular(kind) => write!(f, "not a regular file (it is a {kind:?})"),
            Refusal::TooLarge { len, cap } => {
                write!(f, "the file is {len} bytes; the limit is {cap} bytes")
            }
        }
    }
}

impl std::error::Error for Refusal {}

/// Reads the regular file `rel` beneath `root`, by handle (see the module docs).
pub(crate) fn read_file(
    root: &Path,
    rel: &ResourcePath,
    cap: u64,
) -> io::Result<(FileStat, Vec<u8>)> {
    let mut bytes = Vec::new();
    let stat = read_file_into(root, rel, cap, &mut bytes)?;
    Ok((stat, bytes))
}

/// [`read_file`] into `buf` (cleared first, its capacity reused); on an
/// error `buf` holds nothing meaningful.
pub(crate) fn read_file_into(
    root: &Path,
    rel: &ResourcePath,
    cap: u64,
    buf: &mut Vec<u8>,
) -> io::Result<FileStat> {
    #[cfg(unix)]
    {
        handle::read_file_into(root, rel, cap, buf)
    }
    #[cfg(not(unix))]
    {
        let (stat, bytes) = read_by_path(&crate::vfs::RealFs, root, rel, cap)?;
        *buf = bytes;
        Ok(stat)
    }
}

/// [`read_file_into`] beneath the open folder `dir` (a handle
/// [`crate::vfs::HeldDir`] kept from the listing), which is not looked up
/// again.
#[cfg(unix)]
pub(crate) fn read_file_into_at(
    dir: std::os::fd::BorrowedFd<'_>,
    rel: &ResourcePath,
    cap: u64,
    buf: &mut Vec<u8>,
) -> io::Result<FileStat> {
    handle::read_file_into_at(dir, rel, cap, buf)
}

/// Stats `rel` beneath `root` (the folder itself for `None`), by handle,
/// following links that stay inside.
pub(crate) fn stat(root: &Path, rel: Option<&ResourcePath>) -> io::Result<FileStat> {
    #[cfg(unix)]
    {
        handle::stat(root, rel)
    }
    #[cfg(not(unix))]
    {
        stat_by_path(&crate::vfs::RealFs, root, rel)
    }
}

/// The entry names of the folder `rel` beneath `root` (the folder itself for
/// `None`), by handle.
pub(crate) fn read_dir(root: &Path, rel: Option<&ResourcePath>) -> io::Result<Vec<OsString>> {
    #[cfg(unix)]
    {
        handle::read_dir(root, rel)
    }
    #[cfg(not(unix))]
    {
        read_dir_by_path(&crate::vfs::RealFs, root, rel)
    }
}

#[cfg(feature = "testing")]
thread_local! {
    static FORCE_WALK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Makes handle-based opens on the calling thread skip `openat2` and use the
/// component walk (the fallback of kernels without `openat2`), so tests can
/// check both. Test seam (cargo feature `testing`); no effect off Linux.
#[cfg(feature = "testing")]
pub fn force_walk_on_this_thread(force: bool) {
    FORCE_WALK.with(|f| f.set(force));
}

#[cfg(all(feature = "testing", any(target_os = "linux", target_os = "android")))]
fn walk_forced() -> bool {
    FORCE_WALK.with(std::cell::Cell::get)
}

#[cfg(all(
    not(feature = "testing"),
    any(target_os = "linux", target_os = "android")
))]
fn walk_forced() -> bool {
    false
}

/// The canonical target of `rel` beneath `root`, refused when it leaves it.
fn check_by_path<V: Vfs + ?Sized>(
    vfs: &V,
    root: &Path,
    rel: Option<&ResourcePath>,
) -> io::Result<PathBuf> {
    let root = vfs.canonicalize(root)?;
    let Some(rel) = rel else {
        return Ok(root);
    };
    let joined = rel.components().fold(root.clone(), |p, c| p.join(c));
    let target = vfs.canonicalize(&joined)?;
    if !target.starts_with(&root) {
        return Err(Refusal::OutsideRoot.into_io());
    }
    Ok(target)
}

/// [`Vfs::read_beneath`] on paths: canonicalize, check containment, stat, read.
/// Not race-free; for file systems nobody changes while they are read.
pub(crate) fn read_by_path<V: Vfs + ?Sized>(
    vfs: &V,
    root: &Path,
    rel: &ResourcePath,
    cap: u64,
) -> io::Result<(FileStat, Vec<u8>)> {
    let target = check_by_path(vfs, root, Some(rel))?;
    let stat = vfs.metadata(&target)?;
    if !stat.is_file() {
        return Err(Refusal::NotRegular(stat.kind).into_io());
    }
    if stat.len > cap {
        return Err(Refusal::TooLarge { len: stat.len, cap }.into_io());
    }
    let bytes = vfs.read(&target, cap)?;
    Ok((stat, bytes))
}

/// [`Vfs::stat_beneath`] on paths.
pub(crate) fn stat_by_path<V: Vfs + ?Sized>(
    vfs: &V,
    root: &Path,
    rel: Option<&ResourcePath>,
) -> io::Result<FileStat> {
    vfs.metadata(&check_by_path(vfs, root, rel)?)
}

/// [`Vfs::read_dir_beneath`] on paths.
pub(crate) fn read_dir_by_path<V: Vfs + ?Sized>(
    vfs: &V,
    root: &Path,
    rel: Option<&ResourcePath>,
) -> io::Result<Vec<OsString>> {
    vfs.read_dir(&check_by_path(vfs, root, rel)?)
}

#[cfg(unix)]
mod handle {
    //! The handle walk (see the parent module).

    use std::collections::VecDeque;
    use std::ffi::{OsStr, OsString};
    use std::fs::File;
    use std::io::{self, Read as _};
    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt as _;
    use std::path::Path;

    use rustix::fs::{CWD, Dir, Mode, OFlags, openat, readlinkat};
    use rustix::io::Errno;
    use skills_core::ResourcePath;

    use super::Refusal;
    use crate::vfs::FileStat;

    /// Symbolic links followed in one path at most (Linux's own limit).
    const MAX_LINKS: usize = 40;

    /// Flags of the final open for a read: never blocks on a FIFO or device,
    /// never becomes a controlling terminal.
    const READ: OFlags = OFlags::RDONLY
        .union(OFlags::NONBLOCK)
        .union(OFlags::NOCTTY)
        .union(OFlags::CLOEXEC);
    /// Flags of a folder open.
    const DIR: OFlags = OFlags::RDONLY
        .union(OFlags::DIRECTORY)
        .union(OFlags::CLOEXEC);
    /// Flags of an open for `fstat` only: `O_PATH` where there is one (opens
    /// nothing, so no device driver is called).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const STAT: OFlags = OFlags::PATH.union(OFlags::CLOEXEC);
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    const STAT: OFlags = READ;

    fn open_root(root: &Path) -> io::Result<OwnedFd> {
        Ok(openat(CWD, root, DIR, Mode::empty())?)
    }

    pub(super) fn read_file_into(
        root: &Path,
        rel: &ResourcePath,
        cap: u64,
        bytes: &mut Vec<u8>,
    ) -> io::Result<FileStat> {
        read_file_into_at(open_root(root)?.as_fd(), rel, cap, bytes)
    }

    /// [`read_file_into`] beneath the open folder `dir`.
    pub(super) fn read_file_into_at(
        dir: BorrowedFd<'_>,
        rel: &ResourcePath,
        cap: u64,
        bytes: &mut Vec<u8>,
    ) -> io::Result<FileStat> {
        bytes.clear();
        let fd = open_beneath(dir, rel.as_str(), READ)?;
        let file = File::from(fd);
        // `fstat` on the handle that is read: what is checked is what is read.
        let stat = FileStat::from_std(&file.metadata()?);
        if !stat.is_file() {
            return Err(Refusal::NotRegular(stat.kind).into_io());
        }
        if stat.len > cap {
            return Err(Refusal::TooLarge { len: stat.len, cap }.into_io());
        }
        read_sized(&file, stat.len, cap, bytes)?;
        if bytes.len() as u64 > cap {
            return Err(io::Error::other(format!(
                "the file grew beyond {cap} bytes while being read"
            )));
        }
        Ok(stat)
    }

    /// Reads `file`, which its `fstat` said holds `len` bytes (at most `cap`),
    /// into the empty `bytes`, and no more than `cap + 1` bytes in all.
    ///
    /// A file that gives exactly `len` bytes is taken as read whole: no
    /// further `read` asks for the end, which saves a system call per file
    /// (thousands in a discovery). The `fstat` taken before the read stamps
    /// the file, so bytes appended after it show as a change at the next
    /// staleness check, as any later edit does. A file that gives more than
    /// `len` (it grew) is read on to its end, and one that reports no size
    /// (some virtual file systems) is read to its end from the start.
    pub(super) fn read_sized(
        file: &File,
        len: u64,
        cap: u64,
        bytes: &mut Vec<u8>,
    ) -> io::Result<()> {
        let limit = cap.saturating_add(1);
        let want = usize::try_from(len.min(cap)).unwrap_or(0);
        if want == 0 {
            file.take(limit).read_to_end(bytes)?;
            return Ok(());
        }
        // Room for one byte more than the size, to see a file that grew;
        // read into the spare capacity (nothing to zero first).
        bytes.reserve(want + 1);
        while bytes.len() < want {
            match rustix::io::read(file, rustix::buffer::spare_capacity(bytes)) {
                Ok(0) => return Ok(()),
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => {}
                Err(err) => {
                    bytes.clear();
                    return Err(err.into());
                }
            }
        }
        if bytes.len() > want {
            // It grew. (One read may have filled more of a reused buffer's
            // capacity than `cap + 1`: the excess is dropped.)
            let rest = limit.saturating_sub(bytes.len() as u64);
            file.take(rest).read_to_end(bytes)?;
            bytes.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        }
        Ok(())
    }

    pub(super) fn stat(root: &Path, rel: Option<&ResourcePath>) -> io::Result<FileStat> {
        let dir = open_root(root)?;
        let file = match rel {
            None => File::from(dir),
            Some(rel) => File::from(open_beneath(dir.as_fd(), rel.as_str(), STAT)?),
        };
        Ok(FileStat::from_std(&file.metadata()?))
    }

    pub(super) fn read_dir(root: &Path, rel: Option<&ResourcePath>) -> io::Result<Vec<OsString>> {
        let dir = open_root(root)?;
        let fd = match rel {
            None => dir,
            Some(rel) => open_beneath(dir.as_fd(), rel.as_str(), DIR)?,
        };
        let mut names = Vec::new();
        for entry in Dir::new(fd)? {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                names.push(OsStr::from_bytes(name).to_os_string());
            }
        }
        Ok(names)
    }

    /// Opens `rel` beneath `root` with `flags`: `openat2` when the kernel has
    /// it, the component walk otherwise.
    fn open_beneath(root: BorrowedFd<'_>, rel: &str, flags: OFlags) -> io::Result<OwnedFd> {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if let Some(result) = linux::openat2_beneath(root, rel, flags) {
            return result;
        }
        walk(root, rel, flags)
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    mod linux {
        use std::io;
        use std::os::fd::{BorrowedFd, OwnedFd};
        use std::sync::atomic::{AtomicBool, Ordering};

        use rustix::fs::{Mode, OFlags, ResolveFlags, openat2};
        use rustix::io::Errno;

        use super::Refusal;

        /// Set once `openat2` answered that it is not available here.
        static UNAVAILABLE: AtomicBool = AtomicBool::new(false);

        /// `None` when `openat2` cannot be used (the caller walks instead).
        pub(super) fn openat2_beneath(
            root: BorrowedFd<'_>,
            rel: &str,
            flags: OFlags,
        ) -> Option<io::Result<OwnedFd>> {
            if UNAVAILABLE.load(Ordering::Relaxed) || super::super::walk_forced() {
                return None;
            }
            let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
            // `EAGAIN`: a rename raced with the lookup; the kernel asks to retry.
            for _ in 0..4 {
                match openat2(root, rel, flags, Mode::empty(), resolve) {
                    Ok(fd) => return Some(Ok(fd)),
                    Err(Errno::AGAIN) => continue,
                    // Missing syscall, or a seccomp filter refusing it.
                    Err(Errno::NOSYS | Errno::PERM | Errno::TOOBIG) => {
                        UNAVAILABLE.store(true, Ordering::Relaxed);
                        tracing::debug!("openat2 is not available; walking paths by hand");
                        return None;
                    }
                    Err(Errno::INVAL) => return None,
                    Err(Errno::XDEV) => return Some(Err(Refusal::OutsideRoot.into_io())),
                    Err(e) => return Some(Err(e.into())),
                }
            }
            None
        }
    }

    /// The component walk: `openat(O_NOFOLLOW)` from handle to handle, links
    /// followed by hand and kept beneath `root`.
    pub(super) fn walk(root: BorrowedFd<'_>, rel: &str, flags: OFlags) -> io::Result<OwnedFd> {
        // Folders opened below `root`, innermost last; `..` pops one.
        let mut stack: Vec<OwnedFd> = Vec::new();
        let mut pending: VecDeque<Vec<u8>> =
            rel.split('/').map(|c| c.as_bytes().to_vec()).collect();
        let mut links = 0usize;
        while let Some(component) = pending.pop_front() {
            let top = stack.last().map_or(root, AsFd::as_fd);
            match component.as_slice() {
                b"" | b"." => {
                    if pending.is_empty() {
                        // The path ends on a folder (`x/` or `x/.`): open it.
                        return Ok(openat(top, c".", flags | OFlags::NOFOLLOW, Mode::empty())?);
                    }
                    continue;
                }
                b".." => {
                    if stack.pop().is_none() {
                        return Err(Refusal::OutsideRoot.into_io());
                    }
                    if pending.is_empty() {
                        let top = stack.last().map_or(root, AsFd::as_fd);
                        return Ok(openat(top, c".", flags, Mode::empty())?);
                    }
                    continue;
                }
                _ => {}
            }
            let name = OsStr::from_bytes(&component);
            let last = pending.is_empty();
            let step = if last { flags } else { DIR } | OFlags::NOFOLLOW;
            let opened = openat(top, name, step, Mode::empty());
            let is_link = match &opened {
                // `O_PATH | O_NOFOLLOW` opens the link itself.
                Ok(fd) if last => rustix::fs::fstat(fd)
                    .map(|s| rustix::fs::FileType::from_raw_mode(s.st_mode).is_symlink())?,
                // `O_NOFOLLOW` refuses a link with `ELOOP` (or `ENOTDIR` with
                // `O_DIRECTORY` on some kernels).
                Err(Errno::LOOP | Errno::NOTDIR) => true,
                Ok(_) | Err(_) => false,
            };
            if !is_link {
                let fd = opened?;
                if last {
                    return Ok(fd);
                }
                stack.push(fd);
                continue;
            }
            let target = match readlinkat(top, name, Vec::new()) {
                Ok(target) => target.into_bytes(),
                // Not a link (any more): swapped back between the open and
                // `readlinkat`; try the component again (bounded like links).
                Err(Errno::INVAL) if !matches!(opened, Err(Errno::NOTDIR)) => {
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(Errno::LOOP.into());
                    }
                    pending.push_front(component);
                    continue;
                }
                // `ENOTDIR` and not a link: a file used as a folder.
                Err(Errno::INVAL) => return Err(Errno::NOTDIR.into()),
                Err(e) => return Err(e.into()),
            };
            links += 1;
            if links > MAX_LINKS {
                return Err(Errno::LOOP.into());
            }
            if target.first() == Some(&b'/') {
                return Err(Refusal::OutsideRoot.into_io());
            }
            for part in target.split(|b| *b == b'/').rev() {
                pending.push_front(part.to_vec());
            }
        }
        // An empty path: the root itself.
        Ok(openat(root, c".", flags, Mode::empty())?)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::fd::AsFd as _;

    use rustix::fs::{CWD, Mode, OFlags, openat};

    use super::handle::walk;
    use super::*;

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("skill/sub/deeper")).expect("mkdir");
        std::fs::write(root.join("skill/sub/deeper/file.md"), "in").expect("write");
        std::fs::write(root.join("secret.md"), "out").expect("write");
        let link = |target: &str, at: &str| {
            std::os::unix::fs::symlink(target, root.join(at)).expect("symlink");
        };
        link("sub/deeper/file.md", "skill/inside.md");
        link("../../sub/deeper/file.md", "skill/sub/deeper/up.md");
        link("deeper", "skill/sub/alias");
        link("../secret.md", "skill/out.md");
        link("../../../secret.md", "skill/sub/deeper/far.md");
        link(
            &root.join("skill/sub/deeper/file.md").display().to_string(),
            "skill/abs.md",
        );
        link("loop", "skill/loop");
        dir
    }

    /// The fallback walk and `openat2` agree on which links are followed.
    #[test]
    fn walk_follows_links_inside_and_refuses_links_out() {
        let dir = tree();
        let root = openat(
            CWD,
            dir.path().join("skill"),
            OFlags::RDONLY | OFlags::DIRECTORY,
            Mode::empty(),
        )
        .expect("open");
        let read = |rel: &str| -> io::Result<String> {
            let fd = walk(root.as_fd(), rel, OFlags::RDONLY | OFlags::CLOEXEC)?;
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::fs::File::from(fd), &mut text)?;
            Ok(text)
        };
        for inside in [
            "inside.md",
            "sub/deeper/up.md",
            "sub/alias/file.md",
            "sub/deeper/file.md",
        ] {
            assert_eq!(
                read(inside).map_err(|e| e.to_string()).as_deref(),
                Ok("in"),
                "{inside}"
            );
        }
        for outside in ["out.md", "sub/deeper/far.md", "abs.md"] {
            let err = read(outside).expect_err(outside);
            assert_eq!(
                Refusal::of(&err),
                Some(&Refusal::OutsideRoot),
                "{outside}: {err}"
            );
        }
        let err = read("loop").expect_err("a link loop");
        assert_eq!(
            err.raw_os_error(),
            Some(Errno::LOOP.raw_os_error()),
            "{err}"
        );
        // The public entry points (openat2 where present) agree.
        for inside in ["inside.md", "sub/deeper/up.md", "sub/alias/file.md"] {
            let rel = ResourcePath::parse(inside).expect("path");
            let (_, bytes) = read_file(&dir.path().join("skill"), &rel, 100).expect(inside);
            assert_eq!(bytes, b"in");
        }
        for outside in ["out.md", "sub/deeper/far.md", "abs.md"] {
            let rel = ResourcePath::parse(outside).expect("path");
            let err = read_file(&dir.path().join("skill"), &rel, 100).expect_err(outside);
            assert_eq!(
                Refusal::of(&err),
                Some(&Refusal::OutsideRoot),
                "{outside}: {err}"
            );
        }
    }

    /// `read_sized` against what `fstat` may say: the size exactly, a size
    /// the file outgrew or shrank below since, no size at all, and a file
    /// past the cap (read to `cap + 1` bytes, for the caller to refuse).
    #[test]
    fn a_sized_read_trusts_the_size_only_when_the_file_matches_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("f");
        std::fs::write(&path, b"0123456789").expect("write");
        let file = std::fs::File::open(&path).expect("open");
        let read_with = |len: u64, cap: u64, room: usize| {
            let file = file.try_clone().expect("clone");
            let mut f = &file;
            std::io::Seek::rewind(&mut f).expect("rewind");
            let mut bytes = Vec::with_capacity(room);
            handle::read_sized(&file, len, cap, &mut bytes).expect("read");
            String::from_utf8(bytes).expect("utf-8")
        };
        let read = |len: u64, cap: u64| read_with(len, cap, 0);
        // A reused buffer with room to spare reads no further.
        assert_eq!(
            read_with(4, 5, 1024),
            "012345",
            "a large buffer, past the cap"
        );
        assert_eq!(read_with(10, 100, 1024), "0123456789", "a large buffer");
        assert_eq!(read(10, 100), "0123456789", "the size");
        assert_eq!(read(4, 100), "0123456789", "grew since the stat");
        assert_eq!(read(0, 100), "0123456789", "no size");
        assert_eq!(read(20, 100), "0123456789", "shrank since the stat");
        assert_eq!(read(4, 5), "012345", "past the cap: cap + 1 bytes");
        assert_eq!(read(0, 5), "012345", "no size, past the cap");
    }
    use rustix::io::Errno;
}
