//! The runtime's file work inside workspaces, through directory handles
//! (threat model: H2, H3, H4, H5, H6).
//!
//! A command shares its workspace with the runtime, and may be running while
//! the runtime works there (other runs of the session, interactive
//! sessions, processes it left behind). So the runtime never uses a path
//! inside a workspace twice, and never lets the kernel follow a link there:
//!
//! * writes, creates, renames, mode and owner changes and deletes go through
//!   a [`DirHandle`] (an open folder), one path component at a time with
//!   `O_NOFOLLOW`; a link where a folder should be makes the operation fail
//!   (H2);
//! * reads open the file beneath the session folder with `openat2` and
//!   `RESOLVE_BENEATH` (the kernel refuses any step that leaves it, links
//!   included), non-blocking, and check on the handle that it is a regular
//!   file before reading at most a cap (H3);
//! * every check is made on the handle that is then used (H5).
//!
//! Written on `rustix` rather than `cap-std`: `cap-std` follows links that
//! stay inside its directory (H2 forbids that for writes), and has no
//! owner changes through handles nor the non-blocking type checks H3 needs.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use rustix::fs::{
    AtFlags, FileType, Mode, OFlags, RenameFlags, Stat, fchmod, fchown, fstat, mkdirat, openat,
    renameat, renameat_with, statat, symlinkat, unlinkat,
};
use rustix::process::{Gid, Uid};
use skills_workspace::{WorkspaceError, WorkspaceErrorKind};

/// How deep [`DirHandle::walk_tree`] descends (deeper folders are not
/// visited, and the walk says so).
pub(crate) const MAX_WALK_DEPTH: usize = 128;
/// How many folders deep [`DirHandle::remove_tree`] holds open at once;
/// deeper folders are moved up to the top of the tree and removed from
/// there, so removing any tree needs a bounded number of descriptors.
const REMOVE_DEPTH: usize = 32;
/// Attempts at a fresh temporary name before giving up.
const NAME_ATTEMPTS: usize = 16;

/// An I/O error as a workspace error, with what was being done.
pub(crate) fn io_error(what: impl std::fmt::Display, err: io::Error) -> WorkspaceError {
    WorkspaceError::new(WorkspaceErrorKind::Io, format!("{what}: {err}"))
}

/// An I/O error met while walking to `what` inside a workspace: a link or a
/// non-folder on the way is reported as [`WorkspaceErrorKind::PathEscape`]
/// (H2), a missing one as [`WorkspaceErrorKind::NotFound`].
pub(crate) fn walk_error(what: &str, err: io::Error) -> WorkspaceError {
    match err.raw_os_error() {
        Some(code)
            if code == rustix::io::Errno::LOOP.raw_os_error()
                || code == rustix::io::Errno::NOTDIR.raw_os_error()
                || code == rustix::io::Errno::XDEV.raw_os_error() =>
        {
            WorkspaceError::new(
                WorkspaceErrorKind::PathEscape,
                format!("{what} leads through a link or a file where a folder should be"),
            )
        }
        _ if err.kind() == io::ErrorKind::NotFound => {
            WorkspaceError::new(WorkspaceErrorKind::NotFound, format!("{what}: {err}"))
        }
        _ => io_error(what, err),
    }
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

/// Joins a checked relative path (from
/// [`normalize_relative`](skills_workspace::normalize_relative)) to `root`.
pub(crate) fn join_rel(root: &Path, rel: &str) -> PathBuf {
    if rel.is_empty() {
        root.to_path_buf()
    } else {
        root.join(rel)
    }
}

/// The effective user id of this process.
pub(crate) fn euid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// `n` random bytes as lowercase hex (for names nobody can predict).
pub(crate) fn random_hex(n: usize) -> String {
    let mut buf = vec![0u8; n];
    let filled = rustix::rand::getrandom(&mut buf[..], rustix::rand::GetRandomFlags::empty())
        .is_ok_and(|got| got == n);
    if !filled {
        // No getrandom(2) (very old kernels): std's per-process random
        // hash keys, still unpredictable to another user.
        use std::hash::{BuildHasher, Hasher};
        for chunk in buf.chunks_mut(8) {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(chunk.len() as u64);
            let bytes = h.finish().to_le_bytes();
            chunk.copy_from_slice(&bytes[..chunk.len()]);
        }
    }
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

/// Who owns what a sandboxed command may write: the sandbox's unprivileged
/// host user when the runtime runs as root (contract with the sandbox: the
/// runtime hands those folders over, threat model H6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Owner {
    /// The host user id.
    pub(crate) uid: u32,
    /// The host group id.
    pub(crate) gid: u32,
}

/// The parts of a `stat` the runtime uses.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Meta {
    pub(crate) kind: FileType,
    pub(crate) mode: u32,
    pub(crate) uid: u32,
    pub(crate) nlink: u64,
    pub(crate) size: u64,
    /// Bytes allocated on disk (`st_blocks` × 512).
    pub(crate) allocated: u64,
    pub(crate) dev: u64,
    pub(crate) ino: u64,
}

impl Meta {
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    fn from_stat(st: &Stat) -> Self {
        Self {
            kind: FileType::from_raw_mode(st.st_mode as _),
            mode: st.st_mode as u32 & 0o7777,
            uid: st.st_uid as u32,
            nlink: st.st_nlink as u64,
            size: u64::try_from(st.st_size).unwrap_or(0),
            allocated: u64::try_from(st.st_blocks).unwrap_or(0).saturating_mul(512),
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
        }
    }

    /// A folder.
    pub(crate) fn is_dir(&self) -> bool {
        self.kind == FileType::Directory
    }

    /// A regular file.
    pub(crate) fn is_file(&self) -> bool {
        self.kind == FileType::RegularFile
    }
}

/// The metadata of an open file.
pub(crate) fn meta_of(fd: impl AsFd) -> io::Result<Meta> {
    Ok(Meta::from_stat(&fstat(fd)?))
}

/// What opening a file beneath the workspace found.
#[derive(Debug)]
pub(crate) enum Opened {
    /// A regular file: its size and up to `cap` bytes.
    File { size: u64, bytes: Vec<u8> },
    /// The path leads out of the root (a link pointing out, `..`).
    Outside,
    /// Not a regular file (a folder, a FIFO, a device, a socket).
    NotRegular,
    /// A regular file with several hard links that belongs to someone else
    /// than the runtime's user or the sandbox's: a hard link to a host file.
    ForeignLink,
}

/// The flags every folder is opened with: a real descriptor (it can be
/// listed and its mode and owner changed), never through a link.
fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK
}

/// Refuses names that are not one plain path component.
fn check_name(name: &str) -> io::Result<()> {
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name:?} is not a plain file name"),
        ));
    }
    Ok(())
}

/// The components of a checked relative path (`a/b/c`), refusing `.`, `..`
/// and empty ones in the middle.
fn components(rel: &str) -> io::Result<impl Iterator<Item = &str>> {
    for part in rel.split('/').filter(|p| !p.is_empty()) {
        check_name(part)?;
    }
    Ok(rel.split('/').filter(|p| !p.is_empty()))
}

/// Opens a regular file on the host (a skill's source, a host input) for
/// reading: never through a final link, never blocking on a FIFO, refused
/// unless it is a regular file (H3).
pub(crate) fn open_regular(path: &Path) -> io::Result<(File, Meta)> {
    let fd = openat(
        rustix::fs::CWD,
        path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
        Mode::empty(),
    )?;
    regular_file(fd)
}

/// Checks that `fd` is a regular file and makes it blocking again.
fn regular_file(fd: OwnedFd) -> io::Result<(File, Meta)> {
    let meta = meta_of(&fd)?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let flags = rustix::fs::fcntl_getfl(&fd)?;
    rustix::fs::fcntl_setfl(&fd, flags - OFlags::NONBLOCK)?;
    Ok((File::from(fd), meta))
}

/// Reads at most `cap` bytes of `file` (whose size is `size`).
fn read_capped(file: File, size: u64, cap: u64) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(usize::try_from(size.min(cap)).unwrap_or(0));
    file.take(cap).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// A file [`DirHandle::create_file`] made, open for writing. It holds the
/// shared guard of [`crate::spawn_gate`] until dropped (the file is closed
/// first), so no child is forked while it is open.
pub(crate) struct NewFile {
    file: File,
    _gate: tokio::sync::RwLockReadGuard<'static, ()>,
}

impl std::ops::Deref for NewFile {
    type Target = File;
    fn deref(&self) -> &File {
        &self.file
    }
}

impl std::ops::DerefMut for NewFile {
    fn deref_mut(&mut self) -> &mut File {
        &mut self.file
    }
}

impl Write for NewFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// Copies `src` into `dst`, failing with [`io::ErrorKind::FileTooLarge`]
/// once more than `cap` bytes came; returns the bytes copied.
pub(crate) fn copy_capped(src: &mut dyn Read, dst: &mut File, cap: u64) -> io::Result<u64> {
    let copied = io::copy(&mut src.take(cap.saturating_add(1)), dst)?;
    if copied > cap {
        return Err(too_large(cap));
    }
    Ok(copied)
}

/// The error of a write that would pass a cap.
fn too_large(cap: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!("more than {cap} bytes"),
    )
}

/// `true` for the errors a link or a non-folder on the way gives.
fn is_link_error(e: &rustix::io::Errno) -> bool {
    matches!(
        *e,
        rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR | rustix::io::Errno::XDEV
    )
}

/// A file with several hard links that belongs to none of `owners` (none
/// is checked when `owners` is empty).
fn foreign_link(meta: &Meta, owners: &[u32]) -> bool {
    meta.nlink > 1 && !owners.is_empty() && !owners.contains(&meta.uid)
}

/// What [`DirHandle::walk_tree`] met.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WalkEntry<'a> {
    /// The path relative to the folder the walk started from.
    pub(crate) rel: &'a str,
    /// Its metadata (not following a link).
    pub(crate) meta: Meta,
}

/// How a walk ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct WalkEnd {
    /// It stopped at its entry cap.
    pub(crate) stopped: bool,
    /// Some folders were not visited: deeper than [`MAX_WALK_DEPTH`], or a
    /// path too long to open.
    pub(crate) too_deep: bool,
    /// Some folders could not be read (their mode forbids it).
    pub(crate) unreadable: bool,
}

/// A folder opened by handle, so everything done in it stays there even
/// when a command renames or replaces a folder on the way (runs of one
/// session share the writable workspace). Folders and files made through it
/// are handed to its [`Owner`], when it has one.
#[derive(Debug)]
pub(crate) struct DirHandle {
    fd: OwnedFd,
    owner: Option<Owner>,
}

impl DirHandle {
    /// Opens the folder at `path` (trusted up to its last component, which
    /// must not be a link).
    pub(crate) fn open_path(path: &Path) -> io::Result<Self> {
        Ok(Self {
            fd: openat(rustix::fs::CWD, path, dir_flags(), Mode::empty())?,
            owner: None,
        })
    }

    /// The same folder, handing what is made through it to `owner`.
    pub(crate) fn with_owner(mut self, owner: Option<Owner>) -> Self {
        self.owner = owner;
        self
    }

    /// A second handle on the same folder.
    pub(crate) fn try_clone(&self) -> io::Result<Self> {
        Ok(Self {
            fd: self.fd.try_clone()?,
            owner: self.owner,
        })
    }

    /// This folder's metadata.
    pub(crate) fn meta(&self) -> io::Result<Meta> {
        meta_of(&self.fd)
    }

    /// Opens the folder `rel` below this one, one component at a time,
    /// never following a link (`ELOOP`/`ENOTDIR` when one is on the way).
    pub(crate) fn walk(&self, rel: &str) -> io::Result<Self> {
        let mut dir = self.try_clone()?;
        for part in components(rel)? {
            dir = dir.subdir(part)?;
        }
        Ok(dir)
    }

    /// Like [`walk`](Self::walk), making missing folders (handed to the
    /// owner).
    pub(crate) fn walk_create(&self, rel: &str) -> io::Result<Self> {
        let mut dir = self.try_clone()?;
        for part in components(rel)? {
            dir = dir.ensure_dir(part)?;
        }
        Ok(dir)
    }

    /// Opens the folder `name` in this one (not through a link).
    pub(crate) fn subdir(&self, name: &str) -> io::Result<Self> {
        check_name(name)?;
        Ok(Self {
            fd: openat(&self.fd, name, dir_flags(), Mode::empty())?,
            owner: self.owner,
        })
    }

    /// Opens the folder `name`, making it first when it is missing.
    pub(crate) fn ensure_dir(&self, name: &str) -> io::Result<Self> {
        match self.create_dir(name, 0o755) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => self.subdir(name),
            other => other,
        }
    }

    /// Makes the folder `name` (it must not exist) with `mode`, hands it to
    /// the owner, and opens it.
    pub(crate) fn create_dir(&self, name: &str, mode: u32) -> io::Result<Self> {
        check_name(name)?;
        mkdirat(&self.fd, name, Mode::from_raw_mode(mode))?;
        let dir = self.subdir(name)?;
        dir.hand_over(&dir.fd)?;
        // The mode asked for, whatever the umask.
        fchmod(&dir.fd, Mode::from_raw_mode(mode))?;
        Ok(dir)
    }

    /// Hands `fd` (made through this handle) to the owner, if any.
    fn hand_over(&self, fd: &OwnedFd) -> io::Result<()> {
        if let Some(o) = self.owner {
            fchown(fd, Some(Uid::from_raw(o.uid)), Some(Gid::from_raw(o.gid)))?;
        }
        Ok(())
    }

    /// Changes this folder's mode.
    pub(crate) fn set_mode(&self, mode: u32) -> io::Result<()> {
        Ok(fchmod(&self.fd, Mode::from_raw_mode(mode))?)
    }

    /// The metadata of `name` in this folder, not following a link; `None`
    /// when there is nothing by that name.
    pub(crate) fn stat_at(&self, name: &str) -> io::Result<Option<Meta>> {
        check_name(name)?;
        match statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(Meta::from_stat(&st))),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The names in this folder (without `.` and `..`), in no order; names
    /// that are not UTF-8 are returned as bytes.
    pub(crate) fn names(&self) -> io::Result<Vec<Vec<u8>>> {
        let mut dir = rustix::fs::Dir::read_from(&self.fd)?;
        let mut out = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name != b"." && name != b".." {
                out.push(name.to_vec());
            }
        }
        Ok(out)
    }

    /// Creates the file `name` (it must not exist, and is never a link)
    /// with `mode`, handed to the owner.
    /// While it is open, no process is started (see [`crate::spawn_gate`]);
    /// blocking threads only.
    pub(crate) fn create_file(&self, name: &str, mode: u32) -> io::Result<NewFile> {
        check_name(name)?;
        let gate = crate::spawn_gate::writing();
        let flags = OFlags::WRONLY
            | OFlags::CREATE
            | OFlags::EXCL
            | OFlags::NOFOLLOW
            | OFlags::CLOEXEC
            | OFlags::NOCTTY;
        let fd = openat(&self.fd, name, flags, Mode::from_raw_mode(mode))?;
        self.hand_over(&fd)?;
        fchmod(&fd, Mode::from_raw_mode(mode))?;
        Ok(NewFile {
            file: File::from(fd),
            _gate: gate,
        })
    }

    /// Creates the file `name` in this folder (it must not exist) with
    /// `mode` and writes `bytes` into it.
    pub(crate) fn write_new(&self, name: &str, bytes: &[u8], mode: u32) -> io::Result<()> {
        self.create_file(name, mode)?.write_all(bytes)
    }

    /// Puts a file `name` holding what `src` gives (at most `cap` bytes:
    /// more is [`io::ErrorKind::FileTooLarge`] and nothing changes) in this
    /// folder, replacing whatever was there: a file or a link is replaced
    /// (never followed), a folder removed first. Written under a fresh
    /// temporary name and renamed, so a reader never sees half a file.
    /// Returns the bytes written.
    pub(crate) fn replace_with(
        &self,
        name: &str,
        src: &mut dyn Read,
        cap: u64,
        mode: u32,
    ) -> io::Result<u64> {
        check_name(name)?;
        let (tmp, mut file) = self.temp_file(name, mode)?;
        let written = copy_capped(src, &mut file, cap).and_then(|n| {
            file.flush()?;
            Ok(n)
        });
        drop(file);
        let result = written.and_then(|n| {
            self.rename_over(&tmp, name)?;
            Ok(n)
        });
        if result.is_err() {
            let _ = unlinkat(&self.fd, tmp.as_str(), AtFlags::empty());
        }
        result
    }

    /// A new file under a temporary name next to `name`.
    fn temp_file(&self, name: &str, mode: u32) -> io::Result<(String, NewFile)> {
        let short: String = name.chars().take(32).collect();
        for _ in 0..NAME_ATTEMPTS {
            let tmp = format!(".{short}.skills-tmp-{}", random_hex(6));
            match self.create_file(&tmp, mode) {
                Ok(f) => return Ok((tmp, f)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "no free temporary name",
        ))
    }

    /// Renames `from` to `to` in this folder, replacing a file or link at
    /// `to`, removing a folder there first.
    fn rename_over(&self, from: &str, to: &str) -> io::Result<()> {
        match renameat(&self.fd, from, &self.fd, to) {
            Ok(()) => Ok(()),
            Err(
                rustix::io::Errno::ISDIR | rustix::io::Errno::NOTEMPTY | rustix::io::Errno::EXIST,
            ) => {
                self.remove_tree(to)?;
                Ok(renameat(&self.fd, from, &self.fd, to)?)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Makes the link `name` → `target` in this folder, replacing whatever
    /// was there.
    pub(crate) fn symlink(&self, target: &Path, name: &str) -> io::Result<()> {
        check_name(name)?;
        self.remove_tree(name)?;
        Ok(symlinkat(target, &self.fd, name)?)
    }

    /// Renames `from` in this folder to `to` in `dir` (never following a
    /// link: the entry itself moves).
    pub(crate) fn rename_to(&self, from: &str, dir: &DirHandle, to: &str) -> io::Result<()> {
        check_name(from)?;
        check_name(to)?;
        Ok(renameat(&self.fd, from, &dir.fd, to)?)
    }

    /// Renames `from` to `to` in this folder, failing with
    /// `AlreadyExists` when `to` is there (`RENAME_NOREPLACE`; the entry
    /// itself moves, a link is never followed).
    pub(crate) fn rename_new(&self, from: &str, to: &str) -> io::Result<()> {
        check_name(from)?;
        check_name(to)?;
        Ok(renameat_with(
            &self.fd,
            from,
            &self.fd,
            to,
            RenameFlags::NOREPLACE,
        )?)
    }

    /// Swaps `a` and `b` in this folder atomically (`RENAME_EXCHANGE`).
    pub(crate) fn exchange(&self, a: &str, b: &str) -> io::Result<()> {
        check_name(a)?;
        check_name(b)?;
        Ok(renameat_with(
            &self.fd,
            a,
            &self.fd,
            b,
            RenameFlags::EXCHANGE,
        )?)
    }

    /// Removes the file `name` from this folder, if there.
    pub(crate) fn remove(&self, name: &str) {
        let _ = unlinkat(&self.fd, name, AtFlags::empty());
    }

    /// Removes the empty folder `name`; `false` when it is not empty or not
    /// there.
    pub(crate) fn remove_empty_dir(&self, name: &str) -> bool {
        check_name(name).is_ok() && unlinkat(&self.fd, name, AtFlags::REMOVEDIR).is_ok()
    }

    /// Removes `name` from this folder: a file or a link is unlinked (a link
    /// is never followed), a folder is emptied through handles and removed,
    /// however deep (H6). `false` when there was nothing to remove.
    pub(crate) fn remove_tree(&self, name: &str) -> io::Result<bool> {
        check_name(name)?;
        let Some(meta) = self.stat_at(name)? else {
            return Ok(false);
        };
        if !meta.is_dir() {
            return match unlinkat(&self.fd, name, AtFlags::empty()) {
                Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(true),
                // Swapped for a folder since the look.
                Err(rustix::io::Errno::ISDIR) => self.remove_tree(name),
                Err(e) => Err(e.into()),
            };
        }
        let top = match self.open_for_removal(name) {
            Ok(dir) => dir,
            // Swapped for a link or a file since the look: unlink that.
            Err(e)
                if e.raw_os_error().is_some_and(|c| {
                    c == rustix::io::Errno::LOOP.raw_os_error()
                        || c == rustix::io::Errno::NOTDIR.raw_os_error()
                }) =>
            {
                unlinkat(&self.fd, name, AtFlags::empty())?;
                return Ok(true);
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(e),
        };
        let mut moved = 0u64;
        // Each pass empties what it can reach within REMOVE_DEPTH and moves
        // deeper folders up into `top`; the next pass removes those.
        loop {
            let again = empty_dir(&top, &top, 0, &mut moved)?;
            if !again {
                break;
            }
        }
        drop(top);
        match unlinkat(&self.fd, name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(true),
            Err(e) => Err(e.into()),
        }
    }

    /// Opens the folder `name` to empty it, making it readable and writable
    /// by its owner first when it is not (a folder a command made `0000`).
    fn open_for_removal(&self, name: &str) -> io::Result<DirHandle> {
        let dir = match self.subdir(name) {
            Ok(d) => d,
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::ACCESS.raw_os_error()) => {
                // Open the folder itself (O_PATH needs no permission on
                // it), check it is one, and change the mode of exactly that
                // inode through /proc/self/fd (fchmod refuses O_PATH).
                let fd = openat(
                    &self.fd,
                    name,
                    OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                )?;
                if !meta_of(&fd)?.is_dir() {
                    return Err(io::Error::from_raw_os_error(
                        rustix::io::Errno::NOTDIR.raw_os_error(),
                    ));
                }
                let proc = format!("/proc/self/fd/{}", fd.as_raw_fd());
                std::fs::set_permissions(&proc, std::fs::Permissions::from_mode(0o700))?;
                self.subdir(name)?
            }
            Err(e) => return Err(e),
        };
        let meta = dir.meta()?;
        if meta.mode & 0o700 != 0o700 {
            dir.set_mode(meta.mode | 0o700)?;
        }
        Ok(dir)
    }

    /// Opens the file `rel` beneath this folder for reading: `None` when
    /// the path leads out (H3). Links that stay beneath are followed (the
    /// kernel checks every step); a FIFO never blocks the open.
    pub(crate) fn open_beneath(&self, rel: &str) -> io::Result<Option<OwnedFd>> {
        let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NONBLOCK | OFlags::NOCTTY;
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::{ResolveFlags, openat2};
            let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
            match openat2(&self.fd, rel, flags, Mode::empty(), resolve) {
                Ok(fd) => return Ok(Some(fd)),
                Err(rustix::io::Errno::XDEV | rustix::io::Errno::LOOP) => return Ok(None),
                // No openat2 (Linux before 5.6, or a seccomp filter): walk.
                Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM) => {}
                Err(e) => return Err(e.into()),
            }
        }
        // The walk follows no link at all: stricter than RESOLVE_BENEATH.
        let (parent, name) = match rel.rsplit_once('/') {
            Some((p, n)) => (p, n),
            None => ("", rel),
        };
        let dir = match self.walk(parent) {
            Ok(d) => d,
            Err(e)
                if e.raw_os_error()
                    .is_some_and(|c| is_link_error(&rustix::io::Errno::from_raw_os_error(c))) =>
            {
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        check_name(name)?;
        match openat(&dir.fd, name, flags | OFlags::NOFOLLOW, Mode::empty()) {
            Ok(fd) => Ok(Some(fd)),
            Err(rustix::io::Errno::LOOP) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Reads at most `cap` bytes of the regular file `rel` beneath this
    /// folder (H3). A file with several hard links is read only when it
    /// belongs to one of `owners` (any, when `owners` is empty).
    pub(crate) fn read_beneath(&self, rel: &str, cap: u64, owners: &[u32]) -> io::Result<Opened> {
        Ok(match self.open_regular_beneath(rel, owners)? {
            Ok((file, meta)) => Opened::File {
                size: meta.size,
                bytes: read_capped(file, meta.size, cap)?,
            },
            Err(refused) => refused,
        })
    }

    /// Opens the regular file `rel` beneath this folder for reading, made
    /// blocking again; `Err` with why when it is not one to read (H3).
    pub(crate) fn open_regular_beneath(
        &self,
        rel: &str,
        owners: &[u32],
    ) -> io::Result<Result<(File, Meta), Opened>> {
        let Some(fd) = self.open_beneath(rel)? else {
            return Ok(Err(Opened::Outside));
        };
        let meta = meta_of(&fd)?;
        if !meta.is_file() {
            return Ok(Err(Opened::NotRegular));
        }
        if foreign_link(&meta, owners) {
            return Ok(Err(Opened::ForeignLink));
        }
        regular_file(fd).map(Ok)
    }

    /// Opens the folder `rel` beneath this one without following any link
    /// (`openat2` with `RESOLVE_NO_SYMLINKS`, or a component walk).
    fn dir_beneath(&self, rel: &str) -> io::Result<DirHandle> {
        if rel.is_empty() {
            return self.try_clone();
        }
        #[cfg(target_os = "linux")]
        {
            use rustix::fs::{ResolveFlags, openat2};
            let resolve =
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            match openat2(&self.fd, rel, dir_flags(), Mode::empty(), resolve) {
                Ok(fd) => {
                    return Ok(DirHandle {
                        fd,
                        owner: self.owner,
                    });
                }
                Err(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM) => {}
                Err(e) => return Err(e.into()),
            }
        }
        self.walk(rel)
    }

    /// Walks the tree below `start` (relative, checked; `""` for this
    /// folder), calling `visit` for every entry with its metadata (links
    /// are reported, never followed; folders are descended after their
    /// parent is listed). Stops after `max_entries` entries or when `visit`
    /// returns `false`. Holds one folder open at a time, so any tree can be
    /// walked with a bounded number of descriptors; a folder swapped for a
    /// link while walking is skipped (H2, H5).
    pub(crate) fn walk_tree(
        &self,
        start: &str,
        max_entries: usize,
        visit: &mut dyn FnMut(WalkEntry<'_>) -> bool,
    ) -> io::Result<WalkEnd> {
        let mut end = WalkEnd::default();
        let mut seen = 0usize;
        let mut stack = vec![(start.to_owned(), 0usize)];
        while let Some((rel_dir, depth)) = stack.pop() {
            let dir = match self.dir_beneath(&rel_dir) {
                Ok(d) => d,
                Err(e)
                    if e.raw_os_error() == Some(rustix::io::Errno::NAMETOOLONG.raw_os_error()) =>
                {
                    end.too_deep = true;
                    continue;
                }
                // A folder nobody may read (`chmod 000`): not looked into.
                Err(e)
                    if e.raw_os_error() == Some(rustix::io::Errno::ACCESS.raw_os_error())
                        && !rel_dir.is_empty() =>
                {
                    end.unreadable = true;
                    continue;
                }
                // Gone or swapped for a link since it was listed.
                Err(_) if !rel_dir.is_empty() || !start.is_empty() => continue,
                Err(e) => return Err(e),
            };
            let mut names = dir.names()?;
            names.sort();
            for name in names {
                let Ok(name) = std::str::from_utf8(&name) else {
                    continue;
                };
                let Ok(Some(meta)) = dir.stat_at(name) else {
                    continue;
                };
                seen += 1;
                if seen > max_entries {
                    end.stopped = true;
                    return Ok(end);
                }
                let rel = if rel_dir.is_empty() {
                    name.to_owned()
                } else {
                    format!("{rel_dir}/{name}")
                };
                if !visit(WalkEntry { rel: &rel, meta }) {
                    end.stopped = true;
                    return Ok(end);
                }
                if meta.is_dir() {
                    if depth + 1 >= MAX_WALK_DEPTH {
                        end.too_deep = true;
                    } else {
                        stack.push((rel, depth + 1));
                    }
                }
            }
        }
        Ok(end)
    }
}

/// Empties `dir` (at `depth` below `top`): files and links are unlinked,
/// folders emptied and removed; folders deeper than [`REMOVE_DEPTH`] are
/// moved into `top` instead. `true` when something was moved (another pass
/// is needed).
fn empty_dir(top: &DirHandle, dir: &DirHandle, depth: usize, moved: &mut u64) -> io::Result<bool> {
    let mut again = false;
    for name in dir.names()? {
        let name = OsStr::from_bytes(&name);
        let meta = match statat(&dir.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Meta::from_stat(&st),
            Err(rustix::io::Errno::NOENT) => continue,
            Err(e) => return Err(e.into()),
        };
        if !meta.is_dir() {
            match unlinkat(&dir.fd, name, AtFlags::empty()) {
                Ok(()) | Err(rustix::io::Errno::NOENT) => {}
                Err(e) => return Err(e.into()),
            }
            continue;
        }
        let Some(name) = name.to_str() else {
            // A folder whose name is not UTF-8: move it up under one that is.
            let to = format!(".skills-rm-{moved}-{}", random_hex(4));
            *moved += 1;
            renameat(&dir.fd, name, &top.fd, to.as_str())?;
            again = true;
            continue;
        };
        let child = match dir.open_for_removal(name) {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        if depth + 1 >= REMOVE_DEPTH {
            drop(child);
            let to = format!(".skills-rm-{moved}-{}", random_hex(4));
            *moved += 1;
            dir.rename_to(name, top, &to)?;
            again = true;
            continue;
        }
        again |= empty_dir(top, &child, depth + 1, moved)?;
        drop(child);
        match unlinkat(&dir.fd, name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => {}
            // Something was moved up out of it this pass; it goes later.
            Err(rustix::io::Errno::NOTEMPTY) if again => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(again)
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

    fn outside_with_secret() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::fs::write(outside.join("secret"), "keep").unwrap();
        (dir, outside)
    }

    // threat model: H6
    #[test]
    fn remove_tree_never_follows_links_and_removes_any_tree() {
        let (dir, outside) = outside_with_secret();
        let root = dir.path().join("ws");
        std::fs::create_dir_all(root.join("s/a")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("s/a/link")).unwrap();
        std::os::unix::fs::symlink(outside.join("secret"), root.join("s/file-link")).unwrap();
        // Deeper than what is held open at once.
        let mut deep = root.join("s/deep");
        for _ in 0..(REMOVE_DEPTH * 3) {
            deep = deep.join("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(deep.join("f"), "x").unwrap();
        // A name that is not UTF-8, and folders nobody may enter or write.
        std::fs::create_dir(root.join("s").join(OsStr::from_bytes(b"bad\xff"))).unwrap();
        std::fs::create_dir_all(root.join("s/locked/inner")).unwrap();
        std::fs::write(root.join("s/locked/inner/f"), "x").unwrap();
        std::fs::set_permissions(
            root.join("s/locked/inner"),
            std::fs::Permissions::from_mode(0o000),
        )
        .unwrap();
        std::fs::set_permissions(
            root.join("s/locked"),
            std::fs::Permissions::from_mode(0o500),
        )
        .unwrap();
        let ws = DirHandle::open_path(&root).unwrap();
        assert!(ws.remove_tree("s").unwrap());
        assert!(!root.join("s").exists());
        assert_eq!(
            std::fs::read_to_string(outside.join("secret")).unwrap(),
            "keep"
        );
        assert!(!ws.remove_tree("s").unwrap());
    }

    // threat model: H2, H5
    #[test]
    fn writes_replace_links_and_folders_never_through_them() {
        let (dir, outside) = outside_with_secret();
        let root = dir.path().join("ws");
        std::fs::create_dir_all(root.join("work/full")).unwrap();
        std::fs::write(root.join("work/full/x"), "x").unwrap();
        std::os::unix::fs::symlink(outside.join("secret"), root.join("work/link")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("work/dirlink")).unwrap();
        let ws = DirHandle::open_path(&root).unwrap();
        let work = ws.walk("work").unwrap();
        assert_eq!(
            work.replace_with("link", &mut &b"new"[..], 10, 0o644)
                .unwrap(),
            3
        );
        assert_eq!(
            std::fs::read_to_string(root.join("work/link")).unwrap(),
            "new"
        );
        assert_eq!(
            std::fs::read_to_string(outside.join("secret")).unwrap(),
            "keep"
        );
        work.replace_with("full", &mut &b"f"[..], 10, 0o644)
            .unwrap();
        assert!(root.join("work/full").is_file());
        // Too large: nothing changes, no temporary file is left.
        let e = work
            .replace_with("link", &mut &[0u8; 11][..], 10, 0o644)
            .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::FileTooLarge);
        assert_eq!(
            std::fs::read_to_string(root.join("work/link")).unwrap(),
            "new"
        );
        assert_eq!(std::fs::read_dir(root.join("work")).unwrap().count(), 3);
        // A link where a folder should be: the walk fails, nothing is made
        // outside.
        let e = ws.walk_create("work/dirlink/sub/deeper").unwrap_err();
        assert_eq!(
            walk_error("x", e).kind(),
            WorkspaceErrorKind::PathEscape,
            "ELOOP or ENOTDIR"
        );
        assert!(!outside.join("sub").exists());
        assert!(work.create_file("dirlink", 0o644).is_err());
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1);
    }

    // threat model: H3
    #[test]
    fn reads_stay_beneath_never_block_and_refuse_foreign_hard_links() {
        let (dir, outside) = outside_with_secret();
        let root = dir.path().join("ws");
        std::fs::create_dir_all(root.join("out")).unwrap();
        std::fs::write(root.join("out/ok.txt"), "hello world").unwrap();
        std::os::unix::fs::symlink("ok.txt", root.join("out/inside")).unwrap();
        std::os::unix::fs::symlink(outside.join("secret"), root.join("out/out")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", root.join("out/zero")).unwrap();
        std::os::unix::fs::symlink("../../outside/secret", root.join("out/rel")).unwrap();
        let fifo = root.join("out/fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        std::fs::hard_link(root.join("out/ok.txt"), root.join("out/twin")).unwrap();
        let ws = DirHandle::open_path(&root).unwrap();
        let me = [euid()];
        match ws.read_beneath("out/ok.txt", 5, &me).unwrap() {
            Opened::File { size, bytes } => {
                assert_eq!((size, bytes.as_slice()), (11, &b"hello"[..]))
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            ws.read_beneath("out/inside", 100, &me).unwrap(),
            Opened::File { .. }
        ));
        for rel in ["out/out", "out/zero", "out/rel"] {
            assert!(
                matches!(ws.read_beneath(rel, 100, &me).unwrap(), Opened::Outside),
                "{rel}"
            );
        }
        // A FIFO with no writer: refused at once, not waited on.
        assert!(matches!(
            ws.read_beneath("out/fifo", 100, &me).unwrap(),
            Opened::NotRegular
        ));
        assert!(matches!(
            ws.read_beneath("out", 100, &me).unwrap(),
            Opened::NotRegular
        ));
        // A hard-linked file of another user is refused; one's own is read.
        assert!(matches!(
            ws.read_beneath("out/twin", 100, &me).unwrap(),
            Opened::File { .. }
        ));
        assert!(matches!(
            ws.read_beneath("out/twin", 100, &[me[0].wrapping_add(1)])
                .unwrap(),
            Opened::ForeignLink
        ));
    }

    // threat model: H2
    #[test]
    fn walks_list_by_handle_and_never_descend_links() {
        let (dir, outside) = outside_with_secret();
        let root = dir.path().join("ws");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("a/b/f"), "x").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("a/link")).unwrap();
        let ws = DirHandle::open_path(&root).unwrap();
        let mut seen = Vec::new();
        let end = ws
            .walk_tree("", 100, &mut |e| {
                seen.push(e.rel.to_owned());
                true
            })
            .unwrap();
        seen.sort();
        assert_eq!(seen, ["a", "a/b", "a/b/f", "a/link"]);
        assert_eq!(end, WalkEnd::default());
        let end = ws
            .walk_tree("a/link", 100, &mut |_| panic!("followed a link"))
            .unwrap();
        assert_eq!(end, WalkEnd::default());
        let end = ws.walk_tree("", 2, &mut |_| true).unwrap();
        assert!(end.stopped);
    }

    #[test]
    fn random_names_differ() {
        let a = random_hex(8);
        assert_eq!(a.len(), 16);
        assert_ne!(a, random_hex(8));
    }
}
