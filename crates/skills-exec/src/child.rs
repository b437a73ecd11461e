//! A started command, however it was started: by tokio's `Command` (a
//! `fork`, for `bwrap`) or by [`skills_sandbox::ChildSetup::spawn`] (no
//! `fork`, for local commands: a `fork` copies the runtime's page tables
//! and then faults on every page either side writes, which for a short
//! command costs more than the command). [`execute`](crate::engine) sees
//! both the same way: a pid, its pipes, a wait, and a kill when dropped.

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::pin::Pin;

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite};

/// Output of a started command.
pub(crate) type Reader = Pin<Box<dyn AsyncRead + Send>>;
/// Input of a started command.
pub(crate) type Writer = Pin<Box<dyn AsyncWrite + Send>>;

/// A started command and its pipes.
pub(crate) struct Running {
    /// Its pid (also its process group's id: every command leads one).
    pub(crate) pid: Option<u32>,
    /// Its standard input, when it was given a pipe.
    pub(crate) stdin: Option<Writer>,
    /// Its standard output.
    pub(crate) stdout: Option<Reader>,
    /// Its standard error.
    pub(crate) stderr: Option<Reader>,
    process: Process,
}

enum Process {
    Tokio(tokio::process::Child),
    Direct(Direct),
}

impl Running {
    /// A child of tokio's `Command` (spawned with piped output and
    /// `kill_on_drop`).
    pub(crate) fn from_tokio(mut child: tokio::process::Child) -> Self {
        Self {
            pid: child.id(),
            stdin: child.stdin.take().map(|p| Box::pin(p) as Writer),
            stdout: child.stdout.take().map(|p| Box::pin(p) as Reader),
            stderr: child.stderr.take().map(|p| Box::pin(p) as Reader),
            process: Process::Tokio(child),
        }
    }

    /// Starts `program` with `setup` without a `fork`, with piped output,
    /// standard input piped when `stdin` (else `/dev/null`), in a process
    /// group of its own.
    pub(crate) fn spawn_direct(
        setup: skills_sandbox::ChildSetup,
        path: &std::path::Path,
        args: &[std::ffi::OsString],
        env: &[(std::ffi::OsString, std::ffi::OsString)],
        cwd: &std::path::Path,
        stdin: bool,
    ) -> io::Result<Self> {
        use rustix::pipe::{PipeFlags, pipe_with};
        let (out_r, out_w) = pipe_with(PipeFlags::CLOEXEC)?;
        let (err_r, err_w) = pipe_with(PipeFlags::CLOEXEC)?;
        let (in_r, in_w): (OwnedFd, Option<OwnedFd>) = if stdin {
            let (r, w) = pipe_with(PipeFlags::CLOEXEC)?;
            (r, Some(w))
        } else {
            (std::fs::File::open("/dev/null")?.into(), None)
        };
        let spawned = setup.spawn(&skills_sandbox::Program {
            path,
            args,
            env,
            cwd,
            stdio: [in_r.as_fd(), out_w.as_fd(), err_w.as_fd()],
            process_group: true,
        })?;
        drop((in_r, out_w, err_w));
        let receiver =
            |fd: OwnedFd| tokio::net::unix::pipe::Receiver::from_owned_fd(fd).map(Box::pin);
        let stdout: Reader = receiver(out_r)?;
        let stderr: Reader = receiver(err_r)?;
        let stdin = match in_w {
            Some(w) => Some(Box::pin(tokio::net::unix::pipe::Sender::from_owned_fd(w)?) as Writer),
            None => None,
        };
        // `AsyncFd::new` is deprecated because an arbitrary `AsRawFd` may
        // change or close its descriptor behind the reactor's back; an
        // `OwnedFd` never does (the safe case of `AsyncFd::register`, which
        // is `unsafe` and this crate has none).
        #[allow(deprecated)]
        let pidfd = AsyncFd::new(spawned.pidfd)?;
        Ok(Self {
            pid: u32::try_from(spawned.pid).ok(),
            stdin,
            stdout: Some(stdout),
            stderr: Some(stderr),
            process: Process::Direct(Direct { pidfd: Some(pidfd) }),
        })
    }

    /// Waits for the command to exit; its exit code (`None` when a signal
    /// ended it).
    pub(crate) async fn wait(&mut self) -> io::Result<Option<i32>> {
        match &mut self.process {
            Process::Tokio(child) => Ok(child.wait().await?.code()),
            Process::Direct(direct) => direct.wait().await,
        }
    }
}

/// A child started without tokio: waited for through its pidfd, killed
/// and reaped when dropped before it was waited for.
struct Direct {
    /// `None` once reaped.
    pidfd: Option<AsyncFd<OwnedFd>>,
}

impl Direct {
    async fn wait(&mut self) -> io::Result<Option<i32>> {
        use rustix::process::{WaitId, WaitIdOptions, waitid};
        let Some(fd) = self.pidfd.as_ref() else {
            return Err(io::Error::other("the command was already waited for"));
        };
        loop {
            let mut ready = fd.readable().await?;
            match waitid(
                WaitId::PidFd(fd.get_ref().as_fd()),
                WaitIdOptions::EXITED | WaitIdOptions::NOHANG,
            ) {
                Ok(Some(status)) => {
                    self.pidfd = None;
                    return Ok(status.exit_status());
                }
                Ok(None) => ready.clear_ready(),
                Err(e) => return Err(e.into()),
            }
        }
    }
}

impl Drop for Direct {
    fn drop(&mut self) {
        let Some(fd) = self.pidfd.take() else {
            return;
        };
        let fd = fd.into_inner();
        let _ = rustix::process::pidfd_send_signal(&fd, rustix::process::Signal::KILL);
        // Reap it (it dies at once): on the blocking pool inside a runtime,
        // here otherwise.
        let reap = move || {
            let _ = rustix::process::waitid(
                rustix::process::WaitId::PidFd(fd.as_fd()),
                rustix::process::WaitIdOptions::EXITED,
            );
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => drop(handle.spawn_blocking(reap)),
            Err(_) => reap(),
        }
    }
}
