//! The file-system seam: every call discovery, staleness checks and reads make goes
//! through a [`Vfs`], so tests can count them (`CountingFs`, cargo feature `testing`) or slow them down,
//! and embedders can substitute their own file system.
//!
//! [`RealFs`] is `std::fs` plus the handle-based access of [`crate::beneath`]. The
//! trait is deliberately small: five path operations, each one system call or a
//! short sequence of them, and three operations beneath a skill folder
//! ([`Vfs::read_beneath`], [`Vfs::stat_beneath`], [`Vfs::read_dir_beneath`]) that
//! every read of a skill's files goes through. Their default implementations
//! work on paths (see [`crate::beneath`]), so a fake file system only has to
//! implement the five path operations.

use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use skills_core::ResourcePath;

use crate::beneath;

#[cfg(feature = "testing")]
pub use counting::{CountingFs, FsCounts, FsOp};

/// What a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// A regular file.
    File,
    /// A folder.
    Dir,
    /// A symbolic link (only from [`Vfs::symlink_metadata`]).
    Symlink,
    /// Anything else (socket, device, FIFO).
    Other,
}

/// The part of a `stat` result the provider uses. Two equal values mean "as far
/// as one `stat` can tell, nothing changed".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct FileStat {
    /// What the path is.
    pub kind: FileKind,
    /// Size in bytes (for folders, whatever the file system reports: on tmpfs and
    /// btrfs it grows with the number of entries).
    pub len: u64,
    /// Last modification, full precision, when the platform reports it.
    pub modified: Option<SystemTime>,
    /// Last status change (`ctime`) on Unix, full precision.
    pub changed: Option<SystemTime>,
    /// Device and inode on Unix: a replaced file or folder gets a new one.
    pub file_id: Option<(u64, u64)>,
    /// Hard-link count (for folders on most Unix file systems: 2 + subfolders).
    pub links: u64,
}

impl FileStat {
    /// A stat with only a kind, a size and a modification time; for fake file systems.
    pub fn new(kind: FileKind, len: u64, modified: Option<SystemTime>) -> Self {
        Self {
            kind,
            len,
            modified,
            changed: None,
            file_id: None,
            links: 1,
        }
    }

    /// Sets the device and inode pair.
    #[must_use]
    pub fn with_file_id(mut self, dev: u64, ino: u64) -> Self {
        self.file_id = Some((dev, ino));
        self
    }

    /// Sets the status-change time.
    #[must_use]
    pub fn with_changed(mut self, changed: SystemTime) -> Self {
        self.changed = Some(changed);
        self
    }

    /// Converts a `std::fs::Metadata`.
    pub fn from_std(meta: &fs::Metadata) -> Self {
        let kind = if meta.is_dir() {
            FileKind::Dir
        } else if meta.is_file() {
            FileKind::File
        } else if meta.file_type().is_symlink() {
            FileKind::Symlink
        } else {
            FileKind::Other
        };
        #[cfg_attr(not(unix), allow(unused_mut))]
        let mut stat = Self::new(kind, meta.len(), meta.modified().ok());
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt as _;
            use std::time::{Duration, UNIX_EPOCH};
            stat.file_id = Some((meta.dev(), meta.ino()));
            stat.links = meta.nlink();
            stat.changed = u64::try_from(meta.ctime())
                .ok()
                .zip(u32::try_from(meta.ctime_nsec()).ok())
                .and_then(|(s, n)| UNIX_EPOCH.checked_add(Duration::new(s, n)));
        }
        stat
    }

    /// `true` for a folder.
    pub fn is_dir(&self) -> bool {
        self.kind == FileKind::Dir
    }

    /// `true` for a regular file.
    pub fn is_file(&self) -> bool {
        self.kind == FileKind::File
    }
}

/// A folder's entries with their kinds, as [`Vfs::read_dir_kinds`] gives
/// them (`None`: the listing did not tell).
pub type DirEntries = Vec<(OsString, Option<FileKind>)>;

/// A folder [`Vfs::metadata_list_and_hold`] listed and kept open, for
/// [`Vfs::read_beneath_held_into`]. Empty where the file system keeps no
/// handle (the trait's default, [`RealFs`] off Unix) and once
/// [`HeldDir::MAX`] are held in the process: each one held keeps a file
/// descriptor open until it is dropped or used.
#[derive(Debug, Default)]
pub struct HeldDir {
    #[cfg(unix)]
    slot: Option<held::Slot>,
}

impl HeldDir {
    /// How many folders the process holds open at most; past that,
    /// [`Vfs::metadata_list_and_hold`] closes the folder as
    /// [`Vfs::metadata_and_list`] does (the default soft limit on file
    /// descriptors is 1 024 on most systems).
    pub const MAX: usize = 128;

    /// Whether it holds an open folder.
    pub fn is_held(&self) -> bool {
        #[cfg(unix)]
        {
            self.slot.is_some()
        }
        #[cfg(not(unix))]
        {
            false
        }
    }
}

#[cfg(unix)]
mod held {
    //! The process-wide count of held folders.

    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Folders held open now, in the whole process.
    pub(super) static HELD: AtomicUsize = AtomicUsize::new(0);

    /// One held folder: counted in `count` until dropped.
    #[derive(Debug)]
    pub(super) struct Slot {
        fd: OwnedFd,
        count: &'static AtomicUsize,
    }

    impl Slot {
        /// Counts `fd` in `count`, or closes it when `max` are counted
        /// already.
        pub(super) fn new(fd: OwnedFd, count: &'static AtomicUsize, max: usize) -> Option<Self> {
            count
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                    (n < max).then_some(n + 1)
                })
                .ok()
                .map(|_| Self { fd, count })
        }

        /// The open folder.
        pub(super) fn fd(&self) -> BorrowedFd<'_> {
            self.fd.as_fd()
        }
    }

    impl Drop for Slot {
        fn drop(&mut self) {
            self.count.fetch_sub(1, Ordering::AcqRel);
        }
    }

    #[cfg(test)]
    mod tests {
        #![allow(clippy::unwrap_used)]

        use super::*;

        #[test]
        fn no_more_than_max_are_held_and_a_drop_frees_a_place() {
            static COUNT: AtomicUsize = AtomicUsize::new(0);
            let dir = tempfile::tempdir().unwrap();
            let open = || OwnedFd::from(std::fs::File::open(dir.path()).unwrap());
            let first = Slot::new(open(), &COUNT, 2).expect("one place of two");
            let second = Slot::new(open(), &COUNT, 2).expect("two places of two");
            assert!(
                Slot::new(open(), &COUNT, 2).is_none(),
                "a third is not held"
            );
            assert_eq!(COUNT.load(Ordering::Acquire), 2);
            drop(first);
            assert_eq!(COUNT.load(Ordering::Acquire), 1);
            let third = Slot::new(open(), &COUNT, 2).expect("the freed place");
            drop((second, third));
            assert_eq!(COUNT.load(Ordering::Acquire), 0);
        }
    }
}

/// The file-system operations the provider needs.
///
/// Implementations must be cheap to call concurrently; the provider holds one as
/// `Arc<dyn Vfs>`.
pub trait Vfs: Send + Sync + fmt::Debug {
    /// The names of a folder's entries (no `.` or `..`), in any order.
    fn read_dir(&self, path: &Path) -> io::Result<Vec<OsString>>;

    /// [`Vfs::read_dir`] with each entry's kind when the listing itself tells
    /// (as `lstat` would: a symbolic link is [`FileKind::Symlink`]), so a walk
    /// that only wants real folders need not `stat` every file. `None` means
    /// "unknown: `stat` it"; the default knows nothing.
    fn read_dir_kinds(&self, path: &Path) -> io::Result<Vec<(OsString, Option<FileKind>)>> {
        Ok(self
            .read_dir(path)?
            .into_iter()
            .map(|name| (name, None))
            .collect())
    }

    /// `stat`: follows symbolic links.
    fn metadata(&self, path: &Path) -> io::Result<FileStat>;

    /// [`Vfs::metadata`] of `path` and, when it is a folder, its
    /// [`Vfs::read_dir_kinds`] (`None` when it is not a folder); the stat is
    /// taken before the listing. [`RealFs`] opens the folder once and
    /// `fstat`s the handle it lists, where the two calls would look the path
    /// up twice; the default makes the two calls.
    fn metadata_and_list(
        &self,
        path: &Path,
    ) -> io::Result<(FileStat, Option<io::Result<DirEntries>>)> {
        let meta = self.metadata(path)?;
        let listing = meta.is_dir().then(|| self.read_dir_kinds(path));
        Ok((meta, listing))
    }

    /// [`Vfs::metadata_and_list`], also handing back the folder still open
    /// when the file system can keep it ([`RealFs`] on Unix), so that a file
    /// in it is read later ([`Vfs::read_beneath_held_into`]) without looking
    /// the folder's path up again. The default holds nothing.
    fn metadata_list_and_hold(
        &self,
        path: &Path,
    ) -> io::Result<(FileStat, Option<io::Result<DirEntries>>, HeldDir)> {
        let (meta, listing) = self.metadata_and_list(path)?;
        Ok((meta, listing, HeldDir::default()))
    }

    /// `lstat`: does not follow a final symbolic link.
    fn symlink_metadata(&self, path: &Path) -> io::Result<FileStat>;

    /// Reads a whole file, failing when it holds more than `cap` bytes (the read
    /// stops at `cap + 1`, so a file that grows while read stays bounded).
    fn read(&self, path: &Path, cap: u64) -> io::Result<Vec<u8>>;

    /// The absolute path with every symbolic link resolved.
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf>;

    /// Reads the regular file `rel` inside the folder `root`, failing when it
    /// holds more than `cap` bytes; returns its stat (taken on the file that was
    /// read) and its bytes.
    ///
    /// Links that stay inside `root` are followed; anything leading out fails
    /// with [`Refusal::OutsideRoot`](crate::beneath::Refusal), a file that is not
    /// regular with [`Refusal::NotRegular`](crate::beneath::Refusal), a file over
    /// the cap with [`Refusal::TooLarge`](crate::beneath::Refusal), without
    /// reading (or blocking on) it. [`RealFs`] does this by handle, race-free on
    /// Unix; the default implementation checks paths (canonicalize, contain,
    /// stat, [`Vfs::read`]), which is right for file systems nobody changes
    /// concurrently.
    fn read_beneath(
        &self,
        root: &Path,
        rel: &ResourcePath,
        cap: u64,
    ) -> io::Result<(FileStat, Vec<u8>)> {
        beneath::read_by_path(self, root, rel, cap)
    }

    /// [`Vfs::read_beneath`] into `buf` (cleared first), so that a caller
    /// reading many files reuses one buffer; returns the stat. On an error,
    /// what `buf` holds is unspecified. The default calls
    /// [`Vfs::read_beneath`] and moves its bytes into `buf`.
    fn read_beneath_into(
        &self,
        root: &Path,
        rel: &ResourcePath,
        cap: u64,
        buf: &mut Vec<u8>,
    ) -> io::Result<FileStat> {
        let (stat, bytes) = self.read_beneath(root, rel, cap)?;
        *buf = bytes;
        Ok(stat)
    }

    /// [`Vfs::read_beneath_into`], where `held` is `root` as
    /// [`Vfs::metadata_list_and_hold`] listed it: when it holds the open
    /// folder, `rel` is opened beneath that handle and `root` is not looked
    /// up again (the file comes from the folder that was listed and stamped,
    /// even if a rename has put another one at `root` since). The default
    /// drops `held` and reads by `root`.
    fn read_beneath_held_into(
        &self,
        held: HeldDir,
        root: &Path,
        rel: &ResourcePath,
        cap: u64,
        buf: &mut Vec<u8>,
    ) -> io::Result<FileStat> {
        drop(held);
        self.read_beneath_into(root, rel, cap, buf)
    }

    /// `stat` of `rel` inside `root` (of `root` itself for `None`), following
    /// links that stay inside; refused like [`Vfs::read_beneath`].
    fn stat_beneath(&self, root: &Path, rel: Option<&ResourcePath>) -> io::Result<FileStat> {
        beneath::stat_by_path(self, root, rel)
    }

    /// The entry names of the folder `rel` inside `root` (of `root` itself for
    /// `None`), in any order; refused like [`Vfs::read_beneath`].
    fn read_dir_beneath(
        &self,
        root: &Path,
        rel: Option<&ResourcePath>,
    ) -> io::Result<Vec<OsString>> {
        beneath::read_dir_by_path(self, root, rel)
    }
}

use listing::{list_kinds, list_names, stat_and_list_kinds, stat_list_and_hold};

mod listing {
    //! Folder listings. On Linux, Android, macOS, iOS and the BSDs, rustix's
    //! `openat` and `getdents` (`getdirentries` on the BSDs), with each
    //! entry's kind from the listing itself; elsewhere (Windows, illumos,
    //! Solaris, AIX, Haiku, …, where rustix gives no `d_type`),
    //! `std::fs::read_dir`.

    #[cfg(not(any(
        target_os = "linux",
        target_os = "android",
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "openbsd",
        target_os = "dragonfly"
    )))]
    pub(super) use portable::{list_kinds, list_names, stat_and_list_kinds, stat_list_and_hold};
    #[cfg(any(
        target_os = "linux",
        target_os = "android",
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "openbsd",
        target_os = "dragonfly"
    ))]
    pub(super) use with_d_type::{list_kinds, list_names, stat_and_list_kinds, stat_list_and_hold};

    #[cfg(not(any(
        target_os = "linux",
        target_os = "android",
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "openbsd",
        target_os = "dragonfly"
    )))]
    mod portable {
        use std::ffi::OsString;
        use std::fs;
        use std::io;
        use std::path::Path;

        use super::super::{DirEntries, FileKind, FileStat, HeldDir};

        /// The names of the entries of the folder `path`.
        pub(in crate::vfs) fn list_names(path: &Path) -> io::Result<Vec<OsString>> {
            Ok(fs::read_dir(path)?
                .filter_map(Result::ok)
                .map(|e| e.file_name())
                .collect())
        }

        /// The entries of the folder `path` with their kinds (`None` where
        /// the kind cannot be told).
        pub(in crate::vfs) fn list_kinds(
            path: &Path,
        ) -> io::Result<Vec<(OsString, Option<FileKind>)>> {
            // The kind comes with the entry (`d_type`) on most file systems.
            Ok(fs::read_dir(path)?
                .filter_map(Result::ok)
                .map(|entry| {
                    let kind = entry.file_type().ok().map(|t| {
                        if t.is_dir() {
                            FileKind::Dir
                        } else if t.is_file() {
                            FileKind::File
                        } else if t.is_symlink() {
                            FileKind::Symlink
                        } else {
                            FileKind::Other
                        }
                    });
                    (entry.file_name(), kind)
                })
                .collect())
        }

        /// `Vfs::metadata_and_list`: a `stat`, then the listing of a folder.
        pub(in crate::vfs) fn stat_and_list_kinds(
            path: &Path,
        ) -> io::Result<(FileStat, Option<io::Result<DirEntries>>)> {
            let meta = FileStat::from_std(&fs::metadata(path)?);
            Ok((meta, meta.is_dir().then(|| list_kinds(path))))
        }

        /// `Vfs::metadata_list_and_hold`: nothing is held here.
        pub(in crate::vfs) fn stat_list_and_hold(
            path: &Path,
        ) -> io::Result<(FileStat, Option<io::Result<DirEntries>>, HeldDir)> {
            let (meta, listing) = stat_and_list_kinds(path)?;
            Ok((meta, listing, HeldDir::default()))
        }
    }

    #[cfg(any(
        target_os = "linux",
        target_os = "android",
        target_os = "macos",
        target_os = "ios",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "openbsd",
        target_os = "dragonfly"
    ))]
    mod with_d_type {
        use std::ffi::{OsStr, OsString};
        use std::fs::File;
        use std::io;
        use std::os::fd::{AsFd as _, BorrowedFd, OwnedFd};
        use std::os::unix::ffi::OsStrExt as _;
        use std::path::Path;

        use rustix::fs::{AtFlags, CWD, FileType, Mode, OFlags, openat, statat};

        use super::super::{DirEntries, FileKind, FileStat, HeldDir};

        /// The entries of the folder `path` with their kinds (as `lstat` would
        /// tell; `None` where even that fails). On Linux, one `open`, the
        /// `getdents` calls and one `close`: no `fstat` of the folder, which
        /// `opendir` (under `std::fs::read_dir`) adds to every listing (rustix
        /// goes through `fdopendir`, and its `fstat`, elsewhere).
        pub(in crate::vfs) fn list_kinds(
            path: &Path,
        ) -> io::Result<Vec<(OsString, Option<FileKind>)>> {
            kinds_of(open_dir(path)?.as_fd())
        }

        /// `Vfs::metadata_and_list`: the folder is opened once, its handle
        /// `fstat`ed and then listed. What cannot be opened as a folder (a
        /// file, a missing path, a folder this process may not read) is
        /// `stat`ed by path instead, which tells which it is.
        pub(in crate::vfs) fn stat_and_list_kinds(
            path: &Path,
        ) -> io::Result<(FileStat, Option<io::Result<DirEntries>>)> {
            let (meta, listing, _) = stat_list_and_maybe_keep(path)?;
            Ok((meta, listing))
        }

        /// `Vfs::metadata_list_and_hold`: [`stat_and_list_kinds`], the
        /// folder kept open when it could be listed.
        pub(in crate::vfs) fn stat_list_and_hold(
            path: &Path,
        ) -> io::Result<(FileStat, Option<io::Result<DirEntries>>, HeldDir)> {
            let (meta, listing, fd) = stat_list_and_maybe_keep(path)?;
            let held = match (&listing, fd) {
                // Held unless `HeldDir::MAX` are held already (then closed).
                (Some(Ok(_)), Some(fd)) => HeldDir {
                    slot: super::super::held::Slot::new(
                        fd,
                        &super::super::held::HELD,
                        HeldDir::MAX,
                    ),
                },
                _ => HeldDir::default(),
            };
            Ok((meta, listing, held))
        }

        /// The stat, the listing (`None` for what is not a folder) and the
        /// folder's handle when it was opened.
        #[allow(clippy::type_complexity)]
        fn stat_list_and_maybe_keep(
            path: &Path,
        ) -> io::Result<(FileStat, Option<io::Result<DirEntries>>, Option<OwnedFd>)> {
            let Ok(fd) = open_dir(path) else {
                let meta = FileStat::from_std(&std::fs::metadata(path)?);
                return Ok((meta, meta.is_dir().then(|| list_kinds(path)), None));
            };
            let file = File::from(fd);
            let meta = FileStat::from_std(&file.metadata()?);
            let listing = kinds_of(file.as_fd());
            Ok((meta, Some(listing), Some(OwnedFd::from(file))))
        }

        /// The entries of the open folder `fd` with their kinds.
        fn kinds_of(fd: BorrowedFd<'_>) -> io::Result<Vec<(OsString, Option<FileKind>)>> {
            Ok(read_entries(fd)?
                .into_iter()
                .map(|(name, d_type)| {
                    let kind = classify(fd, &name, d_type);
                    (name, kind)
                })
                .collect())
        }

        /// The names of the entries of the folder `path`: [`list_kinds`] without
        /// the kinds, so an entry without a `d_type` costs no `lstat`.
        pub(in crate::vfs) fn list_names(path: &Path) -> io::Result<Vec<OsString>> {
            let fd = open_dir(path)?;
            Ok(read_entries(fd.as_fd())?
                .into_iter()
                .map(|(name, _)| name)
                .collect())
        }

        /// Opens the folder `path` for listing.
        fn open_dir(path: &Path) -> io::Result<OwnedFd> {
            Ok(openat(
                CWD,
                path,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )?)
        }

        /// The entries of the open folder `fd` with their `d_type`. On Linux
        /// and Android through `RawDir`, which hands out each name from its
        /// buffer (`Dir` allocates one per entry).
        #[cfg(any(target_os = "linux", target_os = "android"))]
        pub(super) fn read_entries(fd: BorrowedFd<'_>) -> io::Result<Vec<(OsString, FileType)>> {
            let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 8192];
            let mut dir = rustix::fs::RawDir::new(fd, &mut buf);
            let mut out = Vec::new();
            while let Some(entry) = dir.next() {
                let entry = entry?;
                let name = entry.file_name().to_bytes();
                if name != b"." && name != b".." {
                    out.push((OsStr::from_bytes(name).to_os_string(), entry.file_type()));
                }
            }
            Ok(out)
        }

        /// The entries of the open folder `fd` with their `d_type`.
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        pub(super) fn read_entries(fd: BorrowedFd<'_>) -> io::Result<Vec<(OsString, FileType)>> {
            let mut dir = rustix::fs::Dir::read_from(fd)?;
            collect(dir.by_ref().map(|entry| {
                entry.map(|e| {
                    let name = OsStr::from_bytes(e.file_name().to_bytes()).to_os_string();
                    (name, e.file_type())
                })
            }))
        }

        /// The entries a listing yields, names with their `d_type`, without `.`
        /// and `..`. An error (anything but the end, which ends the iterator)
        /// fails the whole listing: a listing cut short would hide entries, so
        /// the caller treats the folder as unreadable instead. (The Linux
        /// listing does the same inline, skipping `.` and `..` before it
        /// copies a name.)
        #[cfg(any(test, not(any(target_os = "linux", target_os = "android"))))]
        pub(super) fn collect(
            entries: impl Iterator<Item = rustix::io::Result<(OsString, FileType)>>,
        ) -> io::Result<Vec<(OsString, FileType)>> {
            let mut out = Vec::new();
            for entry in entries {
                let (name, d_type) = entry?;
                if name != "." && name != ".." {
                    out.push((name, d_type));
                }
            }
            Ok(out)
        }

        /// The kind of the entry `name` of the folder `dir`, listed with
        /// `d_type`. `DT_UNKNOWN` (some XFS, overlay and NFS setups never fill
        /// it in) falls back to an `lstat` of the entry, as
        /// `std::fs::DirEntry::file_type` does; `None` when that fails too (the
        /// entry went away since it was listed).
        pub(super) fn classify(
            dir: BorrowedFd<'_>,
            name: &OsStr,
            d_type: FileType,
        ) -> Option<FileKind> {
            let file_type = match d_type {
                FileType::Unknown => statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                    .ok()
                    .map(|stat| FileType::from_raw_mode(stat.st_mode))?,
                known => known,
            };
            Some(match file_type {
                FileType::Directory => FileKind::Dir,
                FileType::RegularFile => FileKind::File,
                FileType::Symlink => FileKind::Symlink,
                _ => FileKind::Other,
            })
        }

        #[cfg(test)]
        mod tests {
            #![allow(clippy::unwrap_used)]

            use std::os::fd::AsFd as _;

            use rustix::io::Errno;

            use super::*;

            /// A listing cut short by an error is an error, not a shorter
            /// listing.
            #[test]
            fn an_error_mid_listing_fails_the_listing() {
                let entries = vec![
                    Ok((OsString::from("."), FileType::Directory)),
                    Ok((OsString::from("a"), FileType::RegularFile)),
                    Err(Errno::IO),
                    Ok((OsString::from("b"), FileType::RegularFile)),
                ];
                let err = collect(entries.into_iter()).expect_err("an EIO mid-listing");
                assert_eq!(err.raw_os_error(), Some(Errno::IO.raw_os_error()));
                let entries = vec![
                    Ok((OsString::from(".."), FileType::Directory)),
                    Ok((OsString::from("a"), FileType::RegularFile)),
                ];
                assert_eq!(
                    collect(entries.into_iter()).unwrap(),
                    [(OsString::from("a"), FileType::RegularFile)]
                );
            }

            /// The real thing: `getdents` on a handle that is not a folder fails
            /// (`ENOTDIR`) on the first read, and so does the listing.
            #[test]
            fn a_failing_getdents_fails_the_listing() {
                let dir = tempfile::tempdir().unwrap();
                let file = dir.path().join("file");
                std::fs::write(&file, "not a folder").unwrap();
                let fd =
                    openat(CWD, &file, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty()).unwrap();
                let err = read_entries(fd.as_fd()).expect_err("getdents on a file");
                assert_eq!(err.raw_os_error(), Some(Errno::NOTDIR.raw_os_error()));
            }

            /// `DT_UNKNOWN` (some XFS, overlay and NFS setups): the kind comes
            /// from an `lstat` of the entry, as `std::fs::DirEntry::file_type`
            /// does.
            #[test]
            fn an_unknown_d_type_is_classified_by_lstat() {
                let tmp = tempfile::tempdir().unwrap();
                let root = tmp.path();
                std::fs::create_dir(root.join("folder")).unwrap();
                std::fs::write(root.join("SKILL.md"), "x").unwrap();
                std::os::unix::fs::symlink("folder", root.join("link")).unwrap();
                std::os::unix::fs::symlink("missing", root.join("dangling")).unwrap();
                let fd = openat(
                    CWD,
                    root,
                    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                    Mode::empty(),
                )
                .unwrap();
                let kind = |name: &str| classify(fd.as_fd(), OsStr::new(name), FileType::Unknown);
                assert_eq!(kind("folder"), Some(FileKind::Dir));
                assert_eq!(kind("SKILL.md"), Some(FileKind::File));
                assert_eq!(kind("link"), Some(FileKind::Symlink));
                assert_eq!(kind("dangling"), Some(FileKind::Symlink));
                // Gone since it was listed: unknown, the caller stats it.
                assert_eq!(kind("vanished"), None);
                // A known `d_type` is taken as it is (no `lstat`).
                assert_eq!(
                    classify(fd.as_fd(), OsStr::new("vanished"), FileType::Directory),
                    Some(FileKind::Dir)
                );
                // Through the whole listing, with real `d_type`s.
                let mut listed = list_kinds(root).unwrap();
                listed.sort_by(|a, b| a.0.cmp(&b.0));
                assert_eq!(
                    listed,
                    [
                        (OsString::from("SKILL.md"), Some(FileKind::File)),
                        (OsString::from("dangling"), Some(FileKind::Symlink)),
                        (OsString::from("folder"), Some(FileKind::Dir)),
                        (OsString::from("link"), Some(FileKind::Symlink)),
                    ]
                );
            }

            /// A held folder is the one that was listed: a file read beneath
            /// it comes from there even after a rename put another folder
            /// at its path; reading by path (nothing held) finds the new one.
            #[test]
            fn a_held_folder_is_read_as_it_was_listed() {
                use crate::vfs::{HeldDir, RealFs, Vfs};
                let tmp = tempfile::tempdir().unwrap();
                let skill = tmp.path().join("skill");
                std::fs::create_dir(&skill).unwrap();
                std::fs::write(skill.join("SKILL.md"), "listed").unwrap();
                let (stat, listing, held) = stat_list_and_hold(&skill).unwrap();
                assert!(stat.is_dir() && held.is_held());
                assert_eq!(listing.unwrap().unwrap().len(), 1);
                std::fs::rename(&skill, tmp.path().join("moved")).unwrap();
                std::fs::create_dir(&skill).unwrap();
                std::fs::write(skill.join("SKILL.md"), "replacement").unwrap();
                let rel = skills_core::ResourcePath::parse("SKILL.md").unwrap();
                let mut buf = Vec::new();
                let read = RealFs
                    .read_beneath_held_into(held, &skill, &rel, 1024, &mut buf)
                    .unwrap();
                assert_eq!((buf.as_slice(), read.len), (&b"listed"[..], 6));
                RealFs
                    .read_beneath_held_into(HeldDir::default(), &skill, &rel, 1024, &mut buf)
                    .unwrap();
                assert_eq!(buf, b"replacement");
                // Only a folder that was listed is held.
                std::fs::write(tmp.path().join("file"), "x").unwrap();
                let (_, listing, held) = stat_list_and_hold(&tmp.path().join("file")).unwrap();
                assert!(listing.is_none() && !held.is_held());
            }

            /// One open for the stat and the listing says what `stat` and a
            /// listing say: for a folder, a link to one, a file, a dangling
            /// link and a missing path.
            #[test]
            fn stat_and_listing_in_one_open_agree_with_the_two_calls() {
                let tmp = tempfile::tempdir().unwrap();
                let root = tmp.path();
                std::fs::create_dir(root.join("folder")).unwrap();
                std::fs::write(root.join("folder/SKILL.md"), "x").unwrap();
                std::fs::create_dir(root.join("folder/sub")).unwrap();
                std::fs::write(root.join("file"), "abc").unwrap();
                std::os::unix::fs::symlink("folder", root.join("link")).unwrap();
                std::os::unix::fs::symlink("missing", root.join("dangling")).unwrap();
                for name in ["folder", "link"] {
                    let path = root.join(name);
                    let (stat, listing) = stat_and_list_kinds(&path).unwrap();
                    let expected = FileStat::from_std(&std::fs::metadata(&path).unwrap());
                    assert_eq!(stat, expected, "{name}");
                    let mut listing = listing.expect("a folder is listed").unwrap();
                    listing.sort_by(|a, b| a.0.cmp(&b.0));
                    let mut expected = list_kinds(&path).unwrap();
                    expected.sort_by(|a, b| a.0.cmp(&b.0));
                    assert_eq!(listing, expected, "{name}");
                }
                let (stat, listing) = stat_and_list_kinds(&root.join("file")).unwrap();
                assert!(stat.is_file() && stat.len == 3);
                assert!(listing.is_none(), "a file is not listed");
                for name in ["dangling", "missing"] {
                    let err = stat_and_list_kinds(&root.join(name)).unwrap_err();
                    assert_eq!(err.kind(), io::ErrorKind::NotFound, "{name}");
                }
            }
        }
    }
}

/// The real file system (`std::fs`).
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFs;

impl Vfs for RealFs {
    fn read_dir(&self, path: &Path) -> io::Result<Vec<OsString>> {
        list_names(path)
    }

    fn read_dir_kinds(&self, path: &Path) -> io::Result<Vec<(OsString, Option<FileKind>)>> {
        list_kinds(path)
    }

    fn metadata_and_list(
        &self,
        path: &Path,
    ) -> io::Result<(FileStat, Option<io::Result<DirEntries>>)> {
        stat_and_list_kinds(path)
    }

    fn metadata_list_and_hold(
        &self,
        path: &Path,
    ) -> io::Result<(FileStat, Option<io::Result<DirEntries>>, HeldDir)> {
        stat_list_and_hold(path)
    }

    fn metadata(&self, path: &Path) -> io::Result<FileStat> {
        fs::metadata(path).map(|m| FileStat::from_std(&m))
    }

    fn symlink_metadata(&self, path: &Path) -> io::Result<FileStat> {
        fs::symlink_metadata(path).map(|m| FileStat::from_std(&m))
    }

    fn read(&self, path: &Path, cap: u64) -> io::Result<Vec<u8>> {
        let file = fs::File::open(path)?;
        // Sized from `fstat`, so a file is read in one `read` plus the one that
        // sees the end (growing from empty costs about ten on a 4 KiB file).
        let hint = file.metadata().map_or(0, |m| m.len()).min(cap);
        let mut bytes = Vec::with_capacity(usize::try_from(hint).unwrap_or(0).saturating_add(1));
        file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > cap {
            return Err(io::Error::other(format!(
                "the file grew beyond {cap} bytes while being read"
            )));
        }
        Ok(bytes)
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        fs::canonicalize(path)
    }

    fn read_beneath(
        &self,
        root: &Path,
        rel: &ResourcePath,
        cap: u64,
    ) -> io::Result<(FileStat, Vec<u8>)> {
        beneath::read_file(root, rel, cap)
    }

    fn read_beneath_into(
        &self,
        root: &Path,
        rel: &ResourcePath,
        cap: u64,
        buf: &mut Vec<u8>,
    ) -> io::Result<FileStat> {
        beneath::read_file_into(root, rel, cap, buf)
    }

    fn read_beneath_held_into(
        &self,
        held: HeldDir,
        root: &Path,
        rel: &ResourcePath,
        cap: u64,
        buf: &mut Vec<u8>,
    ) -> io::Result<FileStat> {
        #[cfg(unix)]
        if let Some(slot) = &held.slot {
            return beneath::read_file_into_at(slot.fd(), rel, cap, buf);
        }
        drop(held);
        beneath::read_file_into(root, rel, cap, buf)
    }

    fn stat_beneath(&self, root: &Path, rel: Option<&ResourcePath>) -> io::Result<FileStat> {
        beneath::stat(root, rel)
    }

    fn read_dir_beneath(
        &self,
        root: &Path,
        rel: Option<&ResourcePath>,
    ) -> io::Result<Vec<OsString>> {
        beneath::read_dir(root, rel)
    }
}

#[cfg(feature = "testing")]
mod counting {
    //! [`CountingFs`], a test seam (cargo feature `testing`).

    use std::collections::BTreeMap;
    use std::ffi::OsString;
    use std::io;
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU64, Ordering};

    use skills_core::ResourcePath;

    use super::{FileKind, FileStat, RealFs, Vfs};

    /// One [`Vfs`] operation, as counted by [`CountingFs`].
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub enum FsOp {
        /// [`Vfs::read_dir`].
        ReadDir,
        /// [`Vfs::metadata`].
        Metadata,
        /// [`Vfs::symlink_metadata`].
        SymlinkMetadata,
        /// [`Vfs::read`] or [`Vfs::read_beneath`] (a file read, logged with the
        /// joined path).
        Read,
        /// [`Vfs::canonicalize`].
        Canonicalize,
        /// [`Vfs::stat_beneath`] (logged with the joined path).
        StatBeneath,
        /// [`Vfs::read_dir_beneath`] (logged with the joined path).
        ReadDirBeneath,
    }

    impl FsOp {
        const ALL: [Self; 7] = [
            Self::ReadDir,
            Self::Metadata,
            Self::SymlinkMetadata,
            Self::Read,
            Self::Canonicalize,
            Self::StatBeneath,
            Self::ReadDirBeneath,
        ];

        fn index(self) -> usize {
            match self {
                Self::ReadDir => 0,
                Self::Metadata => 1,
                Self::SymlinkMetadata => 2,
                Self::Read => 3,
                Self::Canonicalize => 4,
                Self::StatBeneath => 5,
                Self::ReadDirBeneath => 6,
            }
        }
    }

    /// `root` joined with `rel`, for the call log.
    fn joined(root: &Path, rel: Option<&ResourcePath>) -> PathBuf {
        rel.map_or_else(
            || root.to_path_buf(),
            |rel| rel.components().fold(root.to_path_buf(), |p, c| p.join(c)),
        )
    }

    /// Calls made through a [`CountingFs`] since it was created or last reset.
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    pub struct FsCounts {
        /// Calls per operation.
        pub per_op: BTreeMap<FsOp, u64>,
        /// Every call in order, with its path.
        pub calls: Vec<(FsOp, PathBuf)>,
    }

    impl FsCounts {
        /// Calls of one operation.
        pub fn of(&self, op: FsOp) -> u64 {
            self.per_op.get(&op).copied().unwrap_or(0)
        }

        /// All calls.
        pub fn total(&self) -> u64 {
            self.per_op.values().sum()
        }

        /// Calls of `op` on exactly `path`.
        pub fn on(&self, op: FsOp, path: &Path) -> usize {
            self.calls
                .iter()
                .filter(|(o, p)| *o == op && p == path)
                .count()
        }
    }

    /// A [`Vfs`] wrapper that counts and logs every call, for tests and benchmarks
    /// that assert how much file-system work an operation does.
    #[derive(Debug)]
    pub struct CountingFs<F = RealFs> {
        inner: F,
        counts: [AtomicU64; 7],
        log: Mutex<Vec<(FsOp, PathBuf)>>,
    }

    impl Default for CountingFs<RealFs> {
        fn default() -> Self {
            Self::new(RealFs)
        }
    }

    impl<F: Vfs> CountingFs<F> {
        /// Wraps `inner`.
        pub fn new(inner: F) -> Self {
            Self {
                inner,
                counts: Default::default(),
                log: Mutex::new(Vec::new()),
            }
        }

        /// The calls so far.
        pub fn counts(&self) -> FsCounts {
            let per_op = FsOp::ALL
                .iter()
                .map(|op| (*op, self.counts[op.index()].load(Ordering::SeqCst)))
                .filter(|(_, n)| *n > 0)
                .collect();
            let calls = match self.log.lock() {
                Ok(log) => log.clone(),
                Err(poisoned) => poisoned.into_inner().clone(),
            };
            FsCounts { per_op, calls }
        }

        /// All calls so far.
        pub fn total(&self) -> u64 {
            self.counts.iter().map(|c| c.load(Ordering::SeqCst)).sum()
        }

        /// Forgets the calls so far.
        pub fn reset(&self) {
            for count in &self.counts {
                count.store(0, Ordering::SeqCst);
            }
            match self.log.lock() {
                Ok(mut log) => log.clear(),
                Err(poisoned) => poisoned.into_inner().clear(),
            }
        }

        fn record(&self, op: FsOp, path: &Path) {
            self.counts[op.index()].fetch_add(1, Ordering::SeqCst);
            match self.log.lock() {
                Ok(mut log) => log.push((op, path.to_path_buf())),
                Err(poisoned) => poisoned.into_inner().push((op, path.to_path_buf())),
            }
        }
    }

    impl<F: Vfs> Vfs for CountingFs<F> {
        fn read_dir(&self, path: &Path) -> io::Result<Vec<OsString>> {
            self.record(FsOp::ReadDir, path);
            self.inner.read_dir(path)
        }

        fn read_dir_kinds(&self, path: &Path) -> io::Result<Vec<(OsString, Option<FileKind>)>> {
            self.record(FsOp::ReadDir, path);
            self.inner.read_dir_kinds(path)
        }

        fn metadata(&self, path: &Path) -> io::Result<FileStat> {
            self.record(FsOp::Metadata, path);
            self.inner.metadata(path)
        }

        fn symlink_metadata(&self, path: &Path) -> io::Result<FileStat> {
            self.record(FsOp::SymlinkMetadata, path);
            self.inner.symlink_metadata(path)
        }

        fn read(&self, path: &Path, cap: u64) -> io::Result<Vec<u8>> {
            self.record(FsOp::Read, path);
            self.inner.read(path, cap)
        }

        fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
            self.record(FsOp::Canonicalize, path);
            self.inner.canonicalize(path)
        }

        fn read_beneath(
            &self,
            root: &Path,
            rel: &ResourcePath,
            cap: u64,
        ) -> io::Result<(FileStat, Vec<u8>)> {
            self.record(FsOp::Read, &joined(root, Some(rel)));
            self.inner.read_beneath(root, rel, cap)
        }

        fn read_beneath_into(
            &self,
            root: &Path,
            rel: &ResourcePath,
            cap: u64,
            buf: &mut Vec<u8>,
        ) -> io::Result<FileStat> {
            self.record(FsOp::Read, &joined(root, Some(rel)));
            self.inner.read_beneath_into(root, rel, cap, buf)
        }

        fn stat_beneath(&self, root: &Path, rel: Option<&ResourcePath>) -> io::Result<FileStat> {
            self.record(FsOp::StatBeneath, &joined(root, rel));
            self.inner.stat_beneath(root, rel)
        }

        fn read_dir_beneath(
            &self,
            root: &Path,
            rel: Option<&ResourcePath>,
        ) -> io::Result<Vec<OsString>> {
            self.record(FsOp::ReadDirBeneath, &joined(root, rel));
            self.inner.read_dir_beneath(root, rel)
        }
    }
}
