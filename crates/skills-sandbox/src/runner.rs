//! One command in a `bwrap` of its own (`sandbox_per_run`, interactive
//! sessions): the helper is the PID namespace's init (`bwrap --as-pid-1`),
//! runs the command as PID 2, kills everything else when it exits, reports
//! on the status descriptor and exits with the command's code.

use std::io;
use std::os::fd::{OwnedFd, RawFd};
use std::sync::Arc;

use crate::confine::Confinement;
use crate::init::{self, Job};
use crate::protocol::{ExitStatus, HelperConfig, Reply, RunRequest};
use crate::sys;
use crate::transport::write_frame;

/// Where the helper finds what `run` needs.
#[derive(Debug, Default)]
pub(crate) struct RunArgs {
    /// The descriptor to report the exit on.
    pub(crate) status_fd: Option<RawFd>,
    /// `cgroup.procs` descriptors the command joins.
    pub(crate) cgroup_fds: Vec<RawFd>,
    /// The program and its arguments.
    pub(crate) argv: Vec<Vec<u8>>,
}

/// Runs the command; returns the code to exit with.
pub(crate) fn run(cfg: &HelperConfig, args: RunArgs) -> i32 {
    let (status_fd, cgroups) = match take_fds(&args) {
        Ok(fds) => fds,
        Err(e) => {
            let _ = init::tell(rustix::stdio::stderr(), &format!("skills-sandbox: {e}\n"));
            return i32::from(init::EXIT_HELPER_FAILED);
        }
    };
    // Everything else inherited (from `bwrap`'s caller) is closed.
    let mut keep: Vec<RawFd> = cgroups
        .iter()
        .map(std::os::fd::AsRawFd::as_raw_fd)
        .collect();
    keep.extend(status_fd.as_ref().map(std::os::fd::AsRawFd::as_raw_fd));
    sys::close_from(3, &keep);
    let _ = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
    let Some((program, rest)) = args.argv.split_first() else {
        return i32::from(init::EXIT_HELPER_FAILED);
    };
    let request = RunRequest {
        cwd: std::env::current_dir()
            .map(|d| std::os::unix::ffi::OsStrExt::as_bytes(d.as_os_str()).to_vec())
            .unwrap_or_else(|_| b"/".to_vec()),
        program: program.clone(),
        args: rest.to_vec(),
        env: std::env::vars_os()
            .map(|(k, v)| {
                use std::os::unix::ffi::OsStrExt;
                let mut e = k.as_bytes().to_vec();
                e.push(b'=');
                e.extend_from_slice(v.as_bytes());
                e
            })
            .collect(),
        ..RunRequest::default()
    };
    let stdio = |fd: rustix::fd::BorrowedFd<'_>| rustix::io::fcntl_dupfd_cloexec(fd, 3);
    let (Ok(stdout), Ok(stderr), Ok(stdin)) = (
        stdio(rustix::stdio::stdout()),
        stdio(rustix::stdio::stderr()),
        stdio(rustix::stdio::stdin()),
    ) else {
        return i32::from(init::EXIT_HELPER_FAILED);
    };
    let job = Job {
        request: &request,
        stdout,
        stderr,
        stdin: Some(stdin),
    };
    let confinement = Arc::new(Confinement::new(cfg));
    if let Err(e) = confinement.restrict_self() {
        let _ = init::tell(rustix::stdio::stderr(), &format!("skills-sandbox: {e}\n"));
        return i32::from(init::EXIT_HELPER_FAILED);
    }
    let cgroups = Arc::new(cgroups);
    let status = match init::spawn(job, &confinement, &cgroups) {
        Ok(pid) => init::wait_then_kill_all(pid),
        Err(code) => ExitStatus::Code(code),
    };
    if let Some(fd) = &status_fd {
        let reply = Reply::Exited {
            id: 0,
            status,
            notes: init::full_notes(),
        };
        let _ = write_frame(std::os::fd::AsFd::as_fd(fd), &reply.encode());
    }
    status.shell_code()
}

/// Takes ownership of the descriptors named on the command line.
fn take_fds(args: &RunArgs) -> io::Result<(Option<OwnedFd>, Vec<OwnedFd>)> {
    let status = args.status_fd.map(sys::own_inherited).transpose()?;
    let cgroups = args
        .cgroup_fds
        .iter()
        .map(|fd| sys::own_inherited(*fd))
        .collect::<io::Result<_>>()?;
    Ok((status, cgroups))
}
