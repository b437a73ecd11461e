//! The init of a PID namespace (a slot's, or a `bwrap` per run's): runs one
//! command at a time as its PID 2, and when it exits, kills and reaps
//! everything else in the namespace before saying so.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Stdio};
use std::sync::Arc;

use rustix::process::{WaitOptions, WaitStatus};

use crate::confine::Confinement;
use crate::protocol::{ExitStatus, Notes, RunRequest};
use crate::sys;

/// Exit code of a command whose working folder is missing (as bash's `cd`
/// failure in a script).
pub(crate) const EXIT_NO_CWD: u8 = 126;
/// Exit code of a command whose program could not be executed.
pub(crate) const EXIT_NO_PROGRAM: u8 = 127;
/// Exit code when the helper itself failed to start the command.
pub(crate) const EXIT_HELPER_FAILED: u8 = 125;

/// Share of a tmpfs that must stay free for it not to count as full.
const FULL_BELOW_PERCENT: u64 = 1;

/// A command to run, with its descriptors.
pub(crate) struct Job<'a> {
    pub(crate) request: &'a RunRequest,
    pub(crate) stdout: OwnedFd,
    pub(crate) stderr: OwnedFd,
    pub(crate) stdin: Option<OwnedFd>,
}

/// Starts the job's command with `confinement` (joining `cgroups`).
/// `Ok(pid)` once it runs;
/// `Err(code)` when it could not start: the reason went to the job's
/// standard error and `code` is what a shell would exit with.
pub(crate) fn spawn(
    job: Job<'_>,
    confinement: &Arc<Confinement>,
    cgroups: &Arc<Vec<OwnedFd>>,
) -> Result<i32, u8> {
    let req = job.request;
    let cwd = OsStr::from_bytes(&req.cwd);
    let program = OsStr::from_bytes(&req.program);
    let say = |msg: String| {
        let _ = rustix::io::write(job.stderr.as_fd(), msg.as_bytes());
    };
    if !std::path::Path::new(cwd).is_dir() {
        say(format!(
            "cd {}: no such folder\n",
            String::from_utf8_lossy(&req.cwd)
        ));
        return Err(EXIT_NO_CWD);
    }
    let mut cmd = Command::new(program);
    cmd.args(req.args.iter().map(|a| OsStr::from_bytes(a)))
        .env_clear()
        .current_dir(cwd);
    for e in &req.env {
        if let Some(eq) = e.iter().position(|b| *b == b'=') {
            cmd.env(OsStr::from_bytes(&e[..eq]), OsStr::from_bytes(&e[eq + 1..]));
        }
    }
    let stderr_copy = job.stderr.try_clone();
    cmd.stdout(Stdio::from(job.stdout))
        .stderr(Stdio::from(job.stderr))
        .stdin(match job.stdin {
            Some(fd) => Stdio::from(fd),
            None => Stdio::null(),
        });
    let (c, g) = (Arc::clone(confinement), Arc::clone(cgroups));
    let file_size = req.file_size;
    sys::before_exec(&mut cmd, move || c.apply(&g, file_size));
    match cmd.spawn() {
        Ok(child) => {
            // Not waited through `child`: the init reaps every process of
            // its namespace itself.
            let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
            drop(child);
            Ok(pid)
        }
        Err(e) => {
            if let Ok(fd) = stderr_copy {
                let _ = rustix::io::write(
                    fd.as_fd(),
                    format!("{}: {e}\n", String::from_utf8_lossy(&req.program)).as_bytes(),
                );
            }
            Err(EXIT_NO_PROGRAM)
        }
    }
}

/// Waits until process `pid` (the command) exits, reaping any other
/// process that ends meanwhile, then kills and reaps every other process
/// of the namespace (the caller is its init). Returns how the command
/// ended.
pub(crate) fn wait_then_kill_all(pid: i32) -> ExitStatus {
    let mut status = ExitStatus::Code(EXIT_HELPER_FAILED);
    loop {
        match rustix::process::wait(WaitOptions::empty()) {
            Ok(Some((p, st))) if p.as_raw_nonzero().get() == pid => {
                status = exit_status(st);
                break;
            }
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => break,
        }
    }
    kill_and_reap_all();
    status
}

/// Kills every other process of the namespace and reaps them all.
pub(crate) fn kill_and_reap_all() {
    sys::kill_all_others();
    while let Ok(Some(_)) | Err(rustix::io::Errno::INTR) =
        rustix::process::wait(WaitOptions::empty())
    {}
}

fn exit_status(st: WaitStatus) -> ExitStatus {
    if let Some(code) = st.exit_status() {
        ExitStatus::Code(u8::try_from(code & 0xff).unwrap_or(u8::MAX))
    } else if let Some(sig) = st.terminating_signal() {
        ExitStatus::Signal(u8::try_from(sig & 0x7f).unwrap_or(u8::MAX))
    } else {
        ExitStatus::Code(EXIT_HELPER_FAILED)
    }
}

/// The notes on full temporary file systems: `/tmp` and `/dev/shm` with
/// less than 1% free.
pub(crate) fn full_notes() -> Notes {
    let mut notes = Notes::default();
    for (path, bit) in [("/tmp", Notes::TMP_FULL), ("/dev/shm", Notes::SHM_FULL)] {
        if is_full(path) {
            notes.0 |= bit;
        }
    }
    notes
}

fn is_full(path: &str) -> bool {
    match rustix::fs::statfs(path) {
        Ok(s) => {
            let (total, free) = (s.f_blocks, s.f_bavail);
            total > 0 && free.saturating_mul(100) < total.saturating_mul(FULL_BELOW_PERCENT)
        }
        Err(_) => false,
    }
}

/// Writes a message to `fd` (the helper's own diagnostics).
pub(crate) fn tell(fd: impl AsFd, msg: &str) -> io::Result<()> {
    rustix::io::write(fd, msg.as_bytes())
        .map(|_| ())
        .map_err(io::Error::from)
}
