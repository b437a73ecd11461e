//! The system calls no safe wrapper covers: `fork`, `unshare`, closing or
//! marking descriptors this process did not open, `kill(-1)`, installing a
//! seccomp filter, running code between `fork` and `exec`, glibc's
//! allocator settings (`mallopt`, `malloc_trim`). The only module
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

/// `mallopt(M_ARENA_MAX, arenas)`: glibc's allocator creates at most
/// `arenas` arenas from now on. `false` when glibc refused the value.
#[cfg(target_env = "gnu")]
pub(crate) fn malloc_arena_max(arenas: libc::c_int) -> bool {
    // SAFETY: `mallopt` takes two integers and only sets a parameter of
    // the allocator, under its own lock; it may be called at any time,
    // from any thread, and refuses a value it does not accept.
    unsafe { libc::mallopt(libc::M_ARENA_MAX, arenas) == 1 }
}

/// `malloc_trim(0)`: glibc's allocator returns the free pages of all its
/// arenas to the kernel. `true` when some memory was released.
#[cfg(target_env = "gnu")]
pub(crate) fn malloc_trim() -> bool {
    // SAFETY: `malloc_trim` takes an integer and works on the allocator's
    // own state under its locks; it may be called at any time, from any
    // thread.
    unsafe { libc::malloc_trim(0) == 1 }
}

/// `madvise(MADV_DONTNEED)` on `len` bytes at `start`: the process's page
/// tables forget those pages, and the next access maps them again from the
/// file. `code_pages` calls it only on a whole private mapping that is not
/// writable and holds no page of the process's own (`Anonymous: 0 kB`),
/// recorded before any thread started among the objects the dynamic loader
/// never unloads.
pub(crate) fn drop_unwritten_file_pages(start: usize, len: usize) -> io::Result<()> {
    // SAFETY: the range is a private, read-only file mapping every page of
    // which is an unmodified page of its file (no private copy, so none
    // written by the loader or a debugger), and it stays mapped for the
    // life of the process. Dropping such pages changes no byte the program
    // can read: a later access faults the same bytes back from the file.
    // No Rust object lives in that memory apart from the program's code and
    // constants, which are those bytes.
    let rc = unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_DONTNEED) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
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

/// What the child of [`spawn_vfork`] does before `execve`, all prepared in
/// the parent: the child shares the parent's memory (the parent's other
/// threads keep running), so it may not allocate or take a lock; it only
/// makes system calls with what this holds.
pub(crate) struct ExecPlan {
    /// The program, an absolute path (no `PATH` search).
    pub(crate) path: std::ffi::CString,
    /// `argv`, null-terminated, pointing into `strings`.
    argv: Vec<*const libc::c_char>,
    /// `envp`, null-terminated, pointing into `strings`.
    envp: Vec<*const libc::c_char>,
    /// The strings `argv` and `envp` point into (never moved: a
    /// `CString` keeps its bytes on the heap).
    _strings: Vec<std::ffi::CString>,
    /// The working folder.
    pub(crate) cwd: std::ffi::CString,
    /// Standard input, output and error, duplicated onto 0, 1 and 2.
    pub(crate) stdio: [RawFd; 3],
    /// A process group of its own (`setpgid(0, 0)`).
    pub(crate) process_group: bool,
    /// `cgroup.procs` files (open for writing) to join.
    pub(crate) cgroups: Vec<RawFd>,
    /// Resource limits, soft and hard.
    pub(crate) rlimits: Vec<(rustix::process::Resource, u64)>,
    /// Descriptors the program inherits under their own number.
    pub(crate) inherit: Vec<RawFd>,
    /// Every other descriptor above 2 is closed at `exec`.
    pub(crate) close_inherited: bool,
}

impl ExecPlan {
    /// A plan for `path` with `argv` (`argv[0]` included) and `envp`
    /// (`NAME=value` strings) in `cwd`; the rest is set on the fields.
    pub(crate) fn new(
        path: std::ffi::CString,
        argv: Vec<std::ffi::CString>,
        envp: Vec<std::ffi::CString>,
        cwd: std::ffi::CString,
        stdio: [RawFd; 3],
    ) -> Self {
        let pointers = |strings: &[std::ffi::CString]| {
            strings
                .iter()
                .map(|s| s.as_ptr())
                .chain(std::iter::once(std::ptr::null()))
                .collect::<Vec<_>>()
        };
        let argv_ptrs = pointers(&argv);
        let envp_ptrs = pointers(&envp);
        let mut strings = argv;
        strings.extend(envp);
        Self {
            path,
            argv: argv_ptrs,
            envp: envp_ptrs,
            _strings: strings,
            cwd,
            stdio,
            process_group: false,
            cgroups: Vec::new(),
            rlimits: Vec::new(),
            inherit: Vec::new(),
            close_inherited: false,
        }
    }
}

/// The child's stack: a few system calls need little.
const VFORK_STACK_BYTES: usize = 64 * 1024;

/// What the child reports before it gives up: the step that failed and
/// its `errno`.
struct ChildArgs<'a> {
    plan: &'a ExecPlan,
    report: RawFd,
}

/// Steps of the child, reported with the error of the one that failed.
const STEP_SIGNALS: i32 = 1;
const STEP_STDIO: i32 = 2;
const STEP_GROUP: i32 = 3;
const STEP_CWD: i32 = 4;
const STEP_CGROUP: i32 = 5;
const STEP_RLIMIT: i32 = 6;
const STEP_INHERIT: i32 = 7;
const STEP_EXEC: i32 = 8;

/// Starts `plan`'s program as `posix_spawn` does (`clone` with
/// `CLONE_VM | CLONE_VFORK`: no copy of this process's memory), with the
/// setup of [`ExecPlan`] run in the child before `execve`. Returns the
/// child's pid and a pidfd for it; the caller reaps it.
///
/// # Errors
///
/// `clone` failing, or any step of the child failing (the child then
/// exits with 127 and is reaped here), with the step named.
pub(crate) fn spawn_vfork(plan: &ExecPlan) -> io::Result<(i32, std::os::fd::OwnedFd)> {
    use std::os::fd::{AsRawFd, FromRawFd};
    let (report_r, report_w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    let mut stack = vec![0u8; VFORK_STACK_BYTES];
    let args = ChildArgs {
        plan,
        report: report_w.as_raw_fd(),
    };
    // The stack grows down from its end, 16-byte aligned.
    let top = {
        let end = stack.as_mut_ptr_range().end as usize;
        (end & !15) as *mut libc::c_void
    };
    let mut pidfd: libc::c_int = -1;
    // Every signal is blocked around `clone` so that no handler of this
    // process runs in the child, which shares its memory, before the child
    // has put every handler back to the default (see `vfork_child`).
    let old = set_sigmask(&sigset(true));
    // SAFETY: `vfork_child` runs on `stack`, which outlives the call
    // (`CLONE_VFORK` suspends this thread until the child has called
    // `execve` or exited), and reads `args`, which lives on this stack
    // frame for as long; it makes only system calls (see its comments).
    // `CLONE_PIDFD` writes the pidfd to `pidfd`.
    let pid = unsafe {
        libc::clone(
            vfork_child,
            top,
            libc::CLONE_VM | libc::CLONE_VFORK | libc::CLONE_PIDFD | libc::SIGCHLD,
            (&raw const args).cast_mut().cast::<libc::c_void>(),
            &raw mut pidfd,
        )
    };
    let clone_error = io::Error::last_os_error();
    set_sigmask(&old);
    drop(report_w);
    drop(stack);
    if pid == -1 {
        return Err(clone_error);
    }
    // SAFETY: `CLONE_PIDFD` made `pidfd` a new descriptor owned by nobody
    // else.
    let pidfd = unsafe { std::os::fd::OwnedFd::from_raw_fd(pidfd) };
    let mut report = [0u8; 8];
    let got = rustix::io::read(&report_r, &mut report).unwrap_or(0);
    if got == report.len() {
        let step = i32::from_ne_bytes([report[0], report[1], report[2], report[3]]);
        let errno = i32::from_ne_bytes([report[4], report[5], report[6], report[7]]);
        // The child has exited (127): reap it.
        let _ = rustix::process::waitid(
            rustix::process::WaitId::PidFd(std::os::fd::AsFd::as_fd(&pidfd)),
            rustix::process::WaitIdOptions::EXITED,
        );
        let what = match step {
            STEP_SIGNALS => "resetting signals",
            STEP_STDIO => "setting standard input and output",
            STEP_GROUP => "making a process group",
            STEP_CWD => "entering the working folder",
            STEP_CGROUP => "joining the run's cgroup",
            STEP_RLIMIT => "setting a resource limit",
            STEP_INHERIT => "passing a descriptor",
            _ => "executing the program",
        };
        let error = io::Error::from_raw_os_error(errno);
        return Err(io::Error::new(error.kind(), format!("{what}: {error}")));
    }
    Ok((pid, pidfd))
}

/// The child of [`spawn_vfork`]: runs on its own stack in the parent's
/// memory, until `execve`. Only system calls: no allocation, no lock, no
/// thread-local state of the parent's but the `errno` the libc wrappers
/// write (the parent's thread is suspended and does not read it).
extern "C" fn vfork_child(arg: *mut libc::c_void) -> libc::c_int {
    // SAFETY: `arg` is the `ChildArgs` of `spawn_vfork`, alive while the
    // parent's thread is suspended.
    let args = unsafe { &*arg.cast::<ChildArgs<'_>>() };
    let plan = args.plan;
    let fail = |step: i32, errno: i32| -> ! {
        let mut report = [0u8; 8];
        report[..4].copy_from_slice(&step.to_ne_bytes());
        report[4..].copy_from_slice(&errno.to_ne_bytes());
        // SAFETY: writes the 8 bytes above to the report pipe.
        unsafe { libc::write(args.report, report.as_ptr().cast(), report.len()) };
        // SAFETY: ends the child without running anything of the parent's.
        unsafe { libc::_exit(127) }
    };
    // Every handler back to the default (an ignored signal stays ignored,
    // as `exec` keeps it, except SIGPIPE, which Rust ignores for itself),
    // then the signal mask the program expects: empty.
    for sig in 1..65 {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP {
            continue;
        }
        if let Err(errno) = default_action(sig) {
            fail(STEP_SIGNALS, errno);
        }
    }
    set_sigmask(&sigset(false));
    for (target, &fd) in (0..).zip(plan.stdio.iter()) {
        // `dup2` onto 0, 1 and 2 of this child (its own table: no
        // `CLONE_FILES`); a descriptor already there only loses
        // close-on-exec.
        let rc = if fd == target {
            // SAFETY: clears the flags of a descriptor of this child.
            unsafe { libc::fcntl(fd, libc::F_SETFD, 0) }
        } else {
            // SAFETY: duplicates a descriptor of this child onto `target`.
            unsafe { libc::dup2(fd, target) }
        };
        if rc == -1 {
            fail(STEP_STDIO, errno());
        }
    }
    if plan.process_group
        && let Err(e) = rustix::process::setpgid(None, None)
    {
        fail(STEP_GROUP, e.raw_os_error());
    }
    if let Err(e) = rustix::process::chdir(plan.cwd.as_c_str()) {
        fail(STEP_CWD, e.raw_os_error());
    }
    for &fd in &plan.cgroups {
        // SAFETY: writes two bytes from a static buffer.
        if unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) } != 1 {
            fail(STEP_CGROUP, errno());
        }
    }
    for &(resource, value) in &plan.rlimits {
        let limit = rustix::process::Rlimit {
            current: Some(value),
            maximum: Some(value),
        };
        if let Err(e) = rustix::process::setrlimit(resource, limit) {
            fail(STEP_RLIMIT, e.raw_os_error());
        }
    }
    if plan.close_inherited {
        cloexec_from(3);
    }
    for &fd in &plan.inherit {
        // SAFETY: clears close-on-exec on a descriptor the plan names.
        if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } == -1 {
            fail(STEP_INHERIT, errno());
        }
    }
    // The report pipe closes at `execve` (close-on-exec): the parent then
    // reads nothing.
    // SAFETY: `path`, `argv` and `envp` are null-terminated and point into
    // strings the plan keeps alive.
    unsafe {
        libc::execve(plan.path.as_ptr(), plan.argv.as_ptr(), plan.envp.as_ptr());
    }
    fail(STEP_EXEC, errno())
}

/// An empty signal set, or a full one.
fn sigset(full: bool) -> libc::sigset_t {
    // SAFETY: `sigset_t` is plain integers; all zeros is the empty set.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    if full {
        // SAFETY: fills the set given, nothing else.
        unsafe { libc::sigfillset(&raw mut set) };
    }
    set
}

/// Sets the calling thread's signal mask; returns the one it replaced.
fn set_sigmask(set: &libc::sigset_t) -> libc::sigset_t {
    let mut old = sigset(false);
    // SAFETY: reads `set`, writes `old`, both alive for the call.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, set, &raw mut old) };
    old
}

/// A `sigaction` with no handler, no flags and an empty mask.
fn no_action() -> libc::sigaction {
    // SAFETY: `sigaction` is plain data; all zeros is `SIG_DFL` with no
    // flags and an empty mask.
    unsafe { std::mem::zeroed() }
}

/// Puts `sig`'s handler back to the default unless it is the default or
/// ignored (an ignored signal stays ignored, as `exec` keeps it), except
/// SIGPIPE, which Rust ignores for itself: it goes back to the default,
/// as `std::process::Command` does. Only system calls: safe in the child
/// of [`spawn_vfork`], whose handler table is its own (no
/// `CLONE_SIGHAND`).
fn default_action(sig: libc::c_int) -> Result<(), i32> {
    let mut current = no_action();
    // SAFETY: writes the current action of `sig` to `current`.
    if unsafe { libc::sigaction(sig, std::ptr::null(), &raw mut current) } != 0 {
        // Not a signal this kernel has.
        return Ok(());
    }
    if current.sa_sigaction == libc::SIG_DFL
        || (current.sa_sigaction == libc::SIG_IGN && sig != libc::SIGPIPE)
    {
        return Ok(());
    }
    let default = no_action();
    // SAFETY: reads `default`, an action with the default handler.
    if unsafe { libc::sigaction(sig, &raw const default, std::ptr::null_mut()) } != 0 {
        return Err(errno());
    }
    Ok(())
}

/// The calling thread's `errno`.
fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}
