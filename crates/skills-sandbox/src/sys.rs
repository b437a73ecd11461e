//! The system calls no safe wrapper covers: `fork`, `unshare`, closing or
//! marking descriptors this process did not open, `kill(-1)`, installing a
//! seccomp filter, running code between `fork` and `exec`. The only module
//! of the workspace with `unsafe` code; each block says why it is sound.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::RawFd;
use std::os::unix::process::CommandExt;

use crate::seccomp::SockFilter;

/// `fork()`: `Ok(None)` in the child, `Ok(Some(pid))` in the parent.
///
/// Only for the helper's own processes (supervisor, slot, init), which
/// never start a thread, so the child inherits no lock held by another
/// thread and may allocate.
pub(crate) fn fork() -> io::Result<Option<i32>> {
    // SAFETY: the helper's processes are single-threaded (nothing in this
    // crate starts a thread, and the helper's `main` runs before anything
    // else could), which is what `fork` needs for the child to go on
    // running ordinary Rust code.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => Err(io::Error::last_os_error()),
        0 => Ok(None),
        p => Ok(Some(p)),
    }
}

/// The namespaces a slot gets: user, PID, mount and System V IPC.
pub(crate) fn unshare_slot() -> io::Result<()> {
    use rustix::thread::UnshareFlags;
    let flags =
        UnshareFlags::NEWUSER | UnshareFlags::NEWPID | UnshareFlags::NEWNS | UnshareFlags::NEWIPC;
    // SAFETY: `unshare_unsafe` is unsafe only for `CLONE_FILES`, which
    // could leave other threads with descriptors of another table; these
    // flags share nothing of the kind, and the process is single-threaded.
    unsafe { rustix::thread::unshare_unsafe(flags) }.map_err(io::Error::from)
}

/// Removes every System V IPC object (message queue, semaphore set,
/// shared memory segment) of this IPC namespace, as listed in
/// `/proc/sysvipc`. `false` when one could not be removed.
pub(crate) fn remove_ipc_objects() -> bool {
    let mut clean = true;
    for kind in ["msg", "sem", "shm"] {
        let Ok(table) = std::fs::read_to_string(format!("/proc/sysvipc/{kind}")) else {
            continue;
        };
        // A header line, then one object a line; its id is the second
        // column.
        for id in table
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().nth(1)?.parse::<libc::c_int>().ok())
        {
            let rc = match kind {
                // SAFETY: `IPC_RMID` takes no buffer (a null pointer is
                // what the interface expects) and only names the object by
                // id.
                "msg" => unsafe { libc::msgctl(id, libc::IPC_RMID, std::ptr::null_mut()) },
                // SAFETY: `IPC_RMID` takes no further argument.
                "sem" => unsafe { libc::semctl(id, 0, libc::IPC_RMID) },
                // SAFETY: as for `msgctl`.
                _ => unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) },
            };
            clean &= rc == 0;
        }
    }
    clean
}

/// Closes every descriptor from `from` up, except those in `keep`
/// (sorted or not).
pub(crate) fn close_from(from: RawFd, keep: &[RawFd]) {
    let mut keep: Vec<RawFd> = keep.iter().copied().filter(|k| *k >= from).collect();
    keep.sort_unstable();
    keep.dedup();
    let mut start = from;
    for k in keep {
        if k > start {
            close_range(start, k - 1, 0);
        }
        start = k + 1;
    }
    close_range(start, RawFd::MAX, 0);
}

/// Marks every descriptor from `from` up close-on-exec (they stay usable
/// until `exec`, then close).
pub(crate) fn cloexec_from(from: RawFd) {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    close_range(from, RawFd::MAX, CLOSE_RANGE_CLOEXEC);
}

fn close_range(first: RawFd, last: RawFd, flags: libc::c_uint) {
    let (Ok(first), Ok(last)) = (libc::c_uint::try_from(first), libc::c_uint::try_from(last))
    else {
        return;
    };
    // SAFETY: closing (or marking) descriptors by number is sound here:
    // the callers run in a process that is about to `exec` or that owns
    // every descriptor in the range (the helper's own processes, which
    // hold no `OwnedFd` there, see the callers). A kernel without
    // `close_range` (before 5.9) returns `ENOSYS` and nothing happens.
    unsafe {
        libc::syscall(libc::SYS_close_range, first, last, flags);
    }
}

/// `kill(-1, SIGKILL)`: from a PID namespace's init, every other process
/// of the namespace.
pub(crate) fn kill_all_others() {
    // SAFETY: `kill` takes plain integers and touches no memory of ours.
    unsafe {
        libc::kill(-1, libc::SIGKILL);
    }
}

/// Ends the process now (no destructors, no buffered output): for forked
/// children of the helper.
pub(crate) fn exit_now(code: i32) -> ! {
    // SAFETY: `_exit` takes an integer and never returns.
    unsafe { libc::_exit(code) }
}

/// Installs a seccomp filter program on the calling thread (the process
/// must have `no_new_privs`).
pub(crate) fn install_seccomp(program: &[SockFilter]) -> io::Result<()> {
    let len = u16::try_from(program.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "seccomp program too long"))?;
    let fprog = libc::sock_fprog {
        len,
        // `SockFilter` is `#[repr(C)]` with the fields of `sock_filter`,
        // in the same order.
        filter: program.as_ptr().cast::<libc::sock_filter>().cast_mut(),
    };
    // SAFETY: `fprog` points at `program`, which outlives the call; the
    // kernel copies the program and never writes through the pointer.
    let rc = unsafe {
        libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER,
            &raw const fprog,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Takes ownership of descriptor `fd`, inherited from the process that
/// started this one and named on its command line. Refuses the standard
/// ones and a descriptor that is not open.
pub(crate) fn own_inherited(fd: RawFd) -> io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    if fd < 3 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a descriptor to take over",
        ));
    }
    // SAFETY: `fcntl(F_GETFD)` only queries the descriptor table.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the descriptor is open, was inherited for this process to
    // use, and is taken over once (the command line names each once;
    // `close_from` runs only after every named one is owned here).
    Ok(unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// Runs `f` in the child of `cmd`'s spawn, between `fork` and `exec`.
///
/// `f` must only make system calls (no allocation, no locks): when the
/// spawning process has other threads, one of them may hold the
/// allocator's lock at the `fork`.
pub(crate) fn before_exec<F>(cmd: &mut std::process::Command, f: F)
where
    F: FnMut() -> io::Result<()> + Send + Sync + 'static,
{
    // SAFETY: every closure passed here makes only system calls through
    // rustix or this module (async-signal-safe), touching memory it
    // captured before the `fork`; see the callers.
    unsafe {
        cmd.pre_exec(f);
    }
}
