//! Slots: user, PID, mount and IPC namespaces nested in the sandbox's, each
//! with an init that runs the commands sent to it one at a time, each with a
//! fresh `/tmp` and `/dev/shm`.
//!
//! A slot is a child of the supervisor in a process group of its own that
//! entered new namespaces, mapped the sandbox's user to itself, and forked
//! the namespace's PID 1, the init. Once its mounts are made, the init
//! confines itself (landlock, seccomp, no capability in its bounding set)
//! and its commands inherit that; after each run it kills every other
//! process, empties `/tmp` and `/dev/shm` and removes System V IPC
//! objects, so the next run starts clean. The init dies with its parent
//! (`PR_SET_PDEATHSIG`), and everything in the namespace with the init, so
//! killing the slot's process group ends the slot.

use std::collections::BTreeSet;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{AtFlags, Mode, OFlags};
use rustix::mount::{MountFlags, MountPropagationFlags};
use rustix::net::{AddressFamily, SocketFlags, SocketType};

use crate::confine::Confinement;
use crate::init::{self, Job};
use crate::protocol::{HelperConfig, MAX_REQUEST_FRAME, Notes, Reply, Request, RunRequest};
use crate::sys;
use crate::transport::{FrameReader, send_frame, write_frame};

/// Entries a wipe removes before it gives up and the slot is replaced
/// (removing a million files one by one takes seconds; a new slot's file
/// systems are new).
const MAX_WIPE_ENTRIES: usize = 10_000;
/// Folder depth a wipe descends to (deeper trees get a new slot).
const MAX_WIPE_DEPTH: usize = 64;
/// Mode of the temporary folders.
const TMP_MODE: &str = "mode=1777";

/// The supervisor's handle on a slot.
#[derive(Debug)]
pub(crate) struct Slot {
    /// The slot process (its process group has the same id).
    pub(crate) pid: i32,
    /// Requests go there.
    pub(crate) socket: OwnedFd,
}

impl Slot {
    /// Kills the slot and everything in it.
    pub(crate) fn kill(self) {
        if let Some(pid) = rustix::process::Pid::from_raw(self.pid) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

/// Makes a slot (in the supervisor). `reply` is the pipe the init answers
/// on; `cgroups` are the `cgroup.procs` files its commands join. `close`
/// are descriptors of the supervisor the slot must not keep (the other
/// slots' sockets, the host's request socket).
pub(crate) fn make(
    cfg: &HelperConfig,
    reply: &OwnedFd,
    cgroups: Vec<OwnedFd>,
    keep_fds: &[i32],
) -> io::Result<Slot> {
    let (ours, theirs) = rustix::net::socketpair(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::CLOEXEC,
        None,
    )?;
    match sys::fork()? {
        Some(pid) => {
            drop(theirs);
            if let Some(p) = rustix::process::Pid::from_raw(pid) {
                // Also set in the child: whichever runs first, the group
                // exists before the supervisor may signal it.
                let _ = rustix::process::setpgid(Some(p), Some(p));
            }
            Ok(Slot { pid, socket: ours })
        }
        None => {
            drop(ours);
            let mut keep: Vec<i32> = vec![theirs.as_raw_fd(), reply.as_raw_fd()];
            keep.extend(cgroups.iter().map(|c| c.as_raw_fd()));
            keep.extend_from_slice(keep_fds);
            // Nothing of the supervisor's stays open in the slot: not the
            // host's socket (standard input), not another slot's.
            sys::close_from(3, &keep);
            if let Ok(null) = rustix::fs::open("/dev/null", OFlags::RDWR, Mode::empty()) {
                let _ = rustix::stdio::dup2_stdin(&null);
            }
            let code = match slot_main(cfg, reply, theirs, cgroups) {
                Ok(()) => 0,
                Err(_) => 1,
            };
            sys::exit_now(code)
        }
    }
}

/// The slot process: new namespaces, the maps, then the init.
fn slot_main(
    cfg: &HelperConfig,
    reply: &OwnedFd,
    socket: OwnedFd,
    cgroups: Vec<OwnedFd>,
) -> io::Result<()> {
    let _ = rustix::process::setpgid(None, None);
    let (uid, gid) = (rustix::process::getuid(), rustix::process::getgid());
    sys::unshare_slot()?;
    // A non-dumpable process's /proc files belong to root, so a normal
    // user could not write its own maps: dumpable only meanwhile.
    set_dumpable(true)?;
    let maps = write_file("/proc/self/setgroups", "deny")
        .and_then(|()| write_file("/proc/self/uid_map", &format!("{0} {0} 1", uid.as_raw())))
        .and_then(|()| write_file("/proc/self/gid_map", &format!("{0} {0} 1", gid.as_raw())));
    set_dumpable(false)?;
    maps?;
    match sys::fork()? {
        None => {
            let code = match init_main(cfg, reply, socket, cgroups) {
                Ok(()) => 0,
                Err(_) => 1,
            };
            sys::exit_now(code)
        }
        Some(pid) => {
            drop(socket);
            drop(cgroups);
            // The init dies with this process; this process waits for it.
            if let Some(p) = rustix::process::Pid::from_raw(pid) {
                let _ = rustix::process::waitpid(Some(p), rustix::process::WaitOptions::empty());
            }
            Ok(())
        }
    }
}

fn set_dumpable(on: bool) -> io::Result<()> {
    use rustix::process::DumpableBehavior;
    let b = if on {
        DumpableBehavior::Dumpable
    } else {
        DumpableBehavior::NotDumpable
    };
    rustix::process::set_dumpable_behavior(b).map_err(io::Error::from)
}

fn write_file(path: &str, text: &str) -> io::Result<()> {
    let fd = rustix::fs::open(path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty())?;
    rustix::io::write(&fd, text.as_bytes())?;
    Ok(())
}

/// The sandbox's mounts below `/tmp` (a workspace there, an allowed
/// toolchain), kept visible in the slot's own `/tmp`.
#[derive(Debug)]
struct Kept {
    path: PathBuf,
    /// The mount, opened before `/tmp` was covered.
    fd: OwnedFd,
}

/// The temporary folders of a slot.
#[derive(Debug)]
struct TmpFolders {
    kept: Vec<Kept>,
    /// Top-level names in `/tmp` that hold kept mounts (never wiped).
    tops: BTreeSet<Vec<u8>>,
    tmp_size: u64,
    shm_size: u64,
    shm: bool,
}

/// The init (PID 1 of the slot's namespace): the slot's own mounts, then
/// one run at a time until its socket ends.
fn init_main(
    cfg: &HelperConfig,
    reply: &OwnedFd,
    socket: OwnedFd,
    cgroups: Vec<OwnedFd>,
) -> io::Result<()> {
    rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
    rustix::mount::mount_change(
        "/",
        MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
    )?;
    let mut tmp = TmpFolders::new(cfg)?;
    tmp.mount_tmp()?;
    tmp.mount_shm()?;
    // A /proc of the slot's own, showing only its processes; the kernel
    // refuses it where the sandbox's /proc has covered parts. Its /sys
    // made read-only on top of the kernel's own checks.
    if rustix::mount::mount(
        "proc",
        "/proc",
        "proc",
        MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
        None,
    )
    .is_ok()
    {
        read_only_bind("/proc/sys");
    }
    let confinement = Arc::new(Confinement::new(cfg));
    // From here on the init itself runs confined, as its commands will.
    confinement.restrict_self()?;
    let cgroups = Arc::new(cgroups);
    let mut reader = FrameReader::socket(socket, MAX_REQUEST_FRAME);
    loop {
        let Ok(Some(body)) = reader.next_frame() else {
            return Ok(());
        };
        let Ok(Request::Run(req)) = Request::decode(&body) else {
            return Ok(());
        };
        let Ok(fds) = reader.take_fds(2 + usize::from(req.stdin)) else {
            return Ok(());
        };
        let reply_msg = run_one(&req, fds, &confinement, &cgroups, reply, &mut tmp);
        if write_frame(reply.as_fd(), &reply_msg.encode()).is_err() {
            return Ok(());
        }
    }
}

/// Runs one request in the slot; the reply says how it ended.
fn run_one(
    req: &RunRequest,
    fds: Vec<OwnedFd>,
    confinement: &Arc<Confinement>,
    cgroups: &Arc<Vec<OwnedFd>>,
    reply: &OwnedFd,
    tmp: &mut TmpFolders,
) -> Reply {
    let mut fds = fds.into_iter();
    let (Some(stdout), Some(stderr)) = (fds.next(), fds.next()) else {
        return Reply::Failed {
            id: req.id,
            reason: crate::protocol::FailReason::BadRequest,
            message: b"descriptors missing".to_vec(),
        };
    };
    let job = Job {
        request: req,
        stdout,
        stderr,
        stdin: fds.next(),
    };
    let status = match init::spawn(job, confinement, cgroups) {
        Ok(pid) => {
            let _ = write_frame(reply.as_fd(), &Reply::Started { id: req.id }.encode());
            init::wait_then_kill_all(pid)
        }
        Err(code) => {
            let _ = write_frame(reply.as_fd(), &Reply::Started { id: req.id }.encode());
            crate::protocol::ExitStatus::Code(code)
        }
    };
    let mut notes = init::full_notes();
    if !tmp.reset() || !sys::remove_ipc_objects() {
        notes.0 |= Notes::SLOT_SPOILED;
    }
    Reply::Exited {
        id: req.id,
        status,
        notes,
    }
}

impl TmpFolders {
    fn new(cfg: &HelperConfig) -> io::Result<Self> {
        let mut paths = tmp_mounts();
        // Only the outermost: a bind of it brings the ones below along.
        paths.sort();
        let mut outer: Vec<PathBuf> = Vec::new();
        for p in paths {
            if !outer.iter().any(|o| p.starts_with(o)) {
                outer.push(p);
            }
        }
        let mut kept = Vec::new();
        let mut tops = BTreeSet::new();
        for path in outer {
            let fd = rustix::fs::open(&path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty())?;
            if let Some(std::path::Component::Normal(top)) = path.components().nth(2) {
                use std::os::unix::ffi::OsStrExt;
                tops.insert(top.as_bytes().to_vec());
            }
            kept.push(Kept { path, fd });
        }
        Ok(Self {
            kept,
            tops,
            tmp_size: cfg.tmp_size,
            shm_size: cfg.shm_size,
            shm: Path::new("/dev/shm").is_dir(),
        })
    }

    /// A fresh tmpfs on `/tmp`, the kept mounts bound back (the folders
    /// leading to them read-only, so no command can move or hide them).
    fn mount_tmp(&self) -> io::Result<()> {
        mount_tmpfs("/tmp", self.tmp_size)?;
        for k in &self.kept {
            let meta = rustix::fs::fstat(&k.fd)?;
            let is_dir = rustix::fs::FileType::from_raw_mode(meta.st_mode).is_dir();
            if let Some(parent) = k.path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            if is_dir {
                std::fs::create_dir_all(&k.path)?;
            } else {
                std::fs::File::create(&k.path)?;
            }
            let source = format!("/proc/self/fd/{}", k.fd.as_raw_fd());
            rustix::mount::mount_bind_recursive(source.as_str(), &k.path)?;
        }
        for top in &self.tops {
            use std::os::unix::ffi::OsStrExt;
            let path = Path::new("/tmp").join(std::ffi::OsStr::from_bytes(top));
            if !self.kept.iter().any(|k| k.path == path) {
                rustix::mount::mount_bind_recursive(&path, &path)?;
                rustix::mount::mount_remount(
                    &path,
                    MountFlags::BIND | MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV,
                    "",
                )?;
            }
        }
        Ok(())
    }

    fn mount_shm(&self) -> io::Result<()> {
        if self.shm {
            mount_tmpfs("/dev/shm", self.shm_size)?;
        }
        Ok(())
    }

    /// Empties `/tmp` and `/dev/shm` after a run (never entering the kept
    /// mounts). `false` when something is left (too many files, too deep,
    /// or not removable): the slot is then not used again, and a new one
    /// gets fresh file systems.
    fn reset(&mut self) -> bool {
        wipe(Path::new("/tmp"), &self.tops)
            && (!self.shm || wipe(Path::new("/dev/shm"), &BTreeSet::new()))
    }
}

fn mount_tmpfs(target: &str, size: u64) -> io::Result<()> {
    let data = if size > 0 {
        format!("{TMP_MODE},size={size}")
    } else {
        TMP_MODE.to_owned()
    };
    let data = std::ffi::CString::new(data).map_err(io::Error::other)?;
    rustix::mount::mount(
        "tmpfs",
        target,
        "tmpfs",
        MountFlags::NOSUID | MountFlags::NODEV,
        Some(data.as_c_str()),
    )
    .map_err(io::Error::from)
}

fn read_only_bind(path: &str) {
    if rustix::mount::mount_bind_recursive(path, path).is_ok() {
        let _ = rustix::mount::mount_remount(
            path,
            MountFlags::BIND | MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV,
            "",
        );
    }
}

/// Mount points strictly below `/tmp/` in this mount namespace.
fn tmp_mounts() -> Vec<PathBuf> {
    let Ok(info) = std::fs::read("/proc/self/mountinfo") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in info.split(|b| *b == b'\n') {
        // Fields: id, parent, major:minor, root, mount point, …
        let Some(point) = line.split(|b| *b == b' ').nth(4) else {
            continue;
        };
        let point = unescape(point);
        if point.len() > 5 && point.starts_with(b"/tmp/") {
            use std::os::unix::ffi::OsStringExt;
            out.push(PathBuf::from(std::ffi::OsString::from_vec(point)));
        }
    }
    out
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
pub(crate) fn unescape(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'\\'
            && i + 3 < s.len()
            && s[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = s[i + 1..i + 4]
                .iter()
                .fold(0u32, |acc, c| acc * 8 + u32::from(c - b'0'));
            out.push(u8::try_from(v).unwrap_or(b'?'));
            i += 4;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    out
}

/// Removes everything in `dir` except the top-level names in `keep`,
/// never leaving its file system. `false` when something is left (too
/// many entries, too deep, or a removal failed).
fn wipe(dir: &Path, keep: &BTreeSet<Vec<u8>>) -> bool {
    let Ok(fd) = rustix::fs::open(
        dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return false;
    };
    let Ok(meta) = rustix::fs::fstat(&fd) else {
        return false;
    };
    let mut budget = MAX_WIPE_ENTRIES;
    wipe_in(&fd, meta.st_dev, keep, 0, &mut budget)
}

fn wipe_in(
    dir: &OwnedFd,
    dev: u64,
    keep: &BTreeSet<Vec<u8>>,
    depth: usize,
    budget: &mut usize,
) -> bool {
    if depth > MAX_WIPE_DEPTH {
        return false;
    }
    let Some(names) = list(dir) else {
        return false;
    };
    let mut clean = true;
    for name in names {
        if depth == 0 && keep.contains(name.to_bytes()) {
            continue;
        }
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        let Ok(st) = rustix::fs::statat(dir, &name, AtFlags::SYMLINK_NOFOLLOW) else {
            clean = false;
            continue;
        };
        let is_dir = rustix::fs::FileType::from_raw_mode(st.st_mode).is_dir();
        if is_dir {
            if st.st_dev != dev {
                // A mount of the sandbox's: not ours to empty.
                continue;
            }
            let Some(sub) = open_own_dir(dir, &name) else {
                clean = false;
                continue;
            };
            if !wipe_in(&sub, dev, keep, depth + 1, budget) {
                return false;
            }
            if rustix::fs::unlinkat(dir, &name, AtFlags::REMOVEDIR).is_err() {
                clean = false;
            }
        } else if rustix::fs::unlinkat(dir, &name, AtFlags::empty()).is_err() {
            clean = false;
        }
    }
    clean
}

/// Opens the folder `name` in `dir` for listing, never through a link,
/// after making it readable and writable for its owner (a command may have
/// made it `0000`; the init is the same user, not root).
fn open_own_dir(dir: &OwnedFd, name: &std::ffi::CStr) -> Option<OwnedFd> {
    let path = rustix::fs::openat(
        dir,
        name,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    // `fchmod` refuses an O_PATH descriptor; its /proc link names the very
    // folder opened above.
    let via_proc = format!("/proc/self/fd/{}", path.as_raw_fd());
    let _ = rustix::fs::chmod(via_proc.as_str(), Mode::from_raw_mode(0o700));
    rustix::fs::openat(
        &path,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()
}

fn list(dir: &OwnedFd) -> Option<Vec<std::ffi::CString>> {
    let dup = rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let d = rustix::fs::Dir::new(dup).ok()?;
    let mut names = Vec::new();
    for entry in d {
        let entry = entry.ok()?;
        let name = entry.file_name();
        if name.to_bytes() == b"." || name.to_bytes() == b".." {
            continue;
        }
        names.push(name.to_owned());
    }
    Some(names)
}

/// Sends a run to a slot with its descriptors.
pub(crate) fn forward(slot: &Slot, req: &RunRequest, fds: &[OwnedFd]) -> io::Result<()> {
    let borrowed: Vec<_> = fds.iter().map(|f| f.as_fd()).collect();
    send_frame(
        slot.socket.as_fd(),
        &Request::Run(req.clone()).encode(),
        &borrowed,
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn mountinfo_escapes() {
        assert_eq!(unescape(b"/tmp/a\\040b"), b"/tmp/a b");
        assert_eq!(unescape(b"/tmp/x\\134y"), b"/tmp/x\\y");
        assert_eq!(unescape(b"/tmp/\\04"), b"/tmp/\\04");
        assert_eq!(unescape(b"\\"), b"\\");
    }

    #[test]
    fn wipe_empties_a_tree_and_keeps_what_it_must() {
        let base = std::env::temp_dir().join(format!("skills-wipe-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("keep/inner")).unwrap();
        std::fs::create_dir_all(base.join("a/b/c")).unwrap();
        std::fs::write(base.join("a/b/c/f"), "x").unwrap();
        std::fs::write(base.join("top"), "x").unwrap();
        std::os::unix::fs::symlink("/etc", base.join("link")).unwrap();
        // A folder its maker locked.
        std::fs::create_dir_all(base.join("locked/x")).unwrap();
        std::fs::write(base.join("locked/x/f"), "x").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(base.join("locked"), std::fs::Permissions::from_mode(0o000))
            .unwrap();
        let keep: BTreeSet<Vec<u8>> = [b"keep".to_vec()].into();
        assert!(wipe(&base, &keep));
        let left: Vec<_> = std::fs::read_dir(&base)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["keep"]);
        assert!(base.join("keep/inner").is_dir());
        assert!(Path::new("/etc/passwd").exists(), "followed a link");
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn wipe_gives_up_on_too_much_work() {
        let base = std::env::temp_dir().join(format!("skills-wipe-deep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let mut deep = base.clone();
        for _ in 0..(MAX_WIPE_DEPTH + 3) {
            deep.push("d");
        }
        std::fs::create_dir_all(&deep).unwrap();
        assert!(!wipe(&base, &BTreeSet::new()));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
