//! The supervisor: the process `bwrap` starts for a workspace's shared
//! sandbox. It reads requests on its standard input (a Unix socket from
//! the host), makes slots on demand and forwards each run to its slot;
//! slots answer the host directly on the supervisor's standard output.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use rustix::fs::{Mode, OFlags};
use rustix::process::WaitOptions;

use crate::protocol::{
    FailReason, HelperConfig, MAX_REQUEST_FRAME, PROTOCOL_VERSION, Reply, Request,
};
use crate::slot::{self, Slot};
use crate::sys;
use crate::transport::{FrameReader, RecvError, write_frame};

/// Runs the supervisor until its input ends (the host closed it or is
/// gone); then kills every slot and returns.
pub(crate) fn supervise(cfg: &HelperConfig) -> io::Result<()> {
    // Non-dumpable: no command can read or write the supervisor's memory
    // or open its descriptors through /proc.
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)?;
    // Descriptors inherited beyond the three standard ones (a job
    // server's, a shell's) are closed.
    sys::close_from(3, &[]);
    // The replies go to the host's pipe; the standard output itself now
    // points at /dev/null, so nothing else can write to the pipe by
    // accident.
    let reply = rustix::io::fcntl_dupfd_cloexec(rustix::stdio::stdout(), 3)?;
    let null = rustix::fs::open("/dev/null", OFlags::RDWR | OFlags::CLOEXEC, Mode::empty())?;
    rustix::stdio::dup2_stdout(&null)?;
    write_frame(
        reply.as_fd(),
        &Reply::Ready {
            version: PROTOCOL_VERSION,
        }
        .encode(),
    )?;
    // Standard error served the host while `bwrap` started; from here on
    // nobody reads it.
    rustix::stdio::dup2_stderr(&null)?;
    drop(null);
    let input = rustix::io::fcntl_dupfd_cloexec(rustix::stdio::stdin(), 3)?;
    let mut reader = FrameReader::socket(input, MAX_REQUEST_FRAME);
    let mut slots: HashMap<u64, Slot> = HashMap::new();
    loop {
        reap();
        let body = match reader.next_frame() {
            Ok(Some(body)) => body,
            Ok(None) | Err(RecvError::Io(_)) => break,
            Err(_) => break,
        };
        let Ok(request) = Request::decode(&body) else {
            break;
        };
        match request {
            Request::Run(req) => {
                let Ok(fds) = reader.take_fds(req.fd_count()) else {
                    break;
                };
                let (run_fds, cgroup_fds) =
                    split_fds(fds, req.fd_count() - usize::from(req.cgroups));
                if let std::collections::hash_map::Entry::Vacant(e) = slots.entry(req.slot) {
                    let keep = [reply.as_raw_fd()];
                    match slot::make(cfg, &reply, cgroup_fds, &keep) {
                        Ok(s) => {
                            e.insert(s);
                        }
                        Err(e) => {
                            let _ = write_frame(
                                reply.as_fd(),
                                &Reply::Failed {
                                    id: req.id,
                                    reason: FailReason::Slot,
                                    message: e.to_string().into_bytes(),
                                }
                                .encode(),
                            );
                            continue;
                        }
                    }
                }
                let sent = slots
                    .get(&req.slot)
                    .map(|s| slot::forward(s, &req, &run_fds));
                if !matches!(sent, Some(Ok(()))) {
                    if let Some(s) = slots.remove(&req.slot) {
                        s.kill();
                    }
                    let _ = write_frame(
                        reply.as_fd(),
                        &Reply::Failed {
                            id: req.id,
                            reason: FailReason::Slot,
                            message: b"the slot is gone".to_vec(),
                        }
                        .encode(),
                    );
                }
            }
            Request::Kill { slot } => {
                if let Some(s) = slots.remove(&slot) {
                    s.kill();
                }
            }
        }
    }
    for (_, s) in slots.drain() {
        s.kill();
    }
    while rustix::process::wait(WaitOptions::empty()).is_ok_and(|w| w.is_some()) {}
    Ok(())
}

/// The run's own descriptors, then the cgroups'.
fn split_fds(mut fds: Vec<OwnedFd>, run: usize) -> (Vec<OwnedFd>, Vec<OwnedFd>) {
    let cgroups = fds.split_off(run.min(fds.len()));
    (fds, cgroups)
}

/// Reaps slots that ended.
fn reap() {
    while let Ok(Some(_)) = rustix::process::wait(WaitOptions::NOHANG) {}
}
