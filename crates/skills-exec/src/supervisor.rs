//! One long-lived bubblewrap per workspace (F-EXE-8, run overhead): the
//! host side of the helper's supervisor ([`skills_sandbox`]).
//!
//! Creating bubblewrap's namespaces and mounts costs several times a plain
//! process start, so the sandbox runtime starts one `bwrap` per workspace,
//! with exactly the confinement a single run gets (see [`crate::sandbox`]),
//! running the helper as its supervisor. Each command runs in a *slot*:
//! user, PID, mount and IPC namespaces of its own nested in the sandbox's,
//! with its own `/tmp`, `/dev/shm` and `/proc`, reused by the session's
//! later runs once emptied (every process killed, `/tmp` and `/dev/shm`
//! cleared, System V IPC gone with the run's own IPC namespace); so a
//! command and everything it forked (background, `setsid`, double fork)
//! are gone when the command exits or the run is killed, as with a `bwrap`
//! per run, and nothing it left in `/tmp` reaches the next run.
//!
//! Requests go to the supervisor over a Unix socket with the run's
//! descriptors attached (pipes for its output and input, and for a new
//! slot the `cgroup.procs` of its cgroup), so nothing of the run's plumbing
//! lives where a command could reach it. Replies come back on a pipe; a
//! reply that breaks the protocol marks the supervisor dead (it is then
//! replaced).
//!
//! The `bwrap` is spawned from a thread that lives as long as it does (its
//! `--die-with-parent` follows the spawning thread). The supervisor ends
//! when its input does: when the workspace is cleaned up, when the last
//! holder drops it, or when the runtime's process dies; it then kills every
//! slot and exits, and `bwrap` with it. When a skill's `.venv/` appears or
//! is replaced (its bind mount is fixed when `bwrap` starts), a new
//! supervisor is started for the next runs; the old one ends when its last
//! running command is done.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::io::Read;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use skills_sandbox::protocol::{
    ExitStatus, FailReason, MAX_REPLY_FRAME, Notes, PROTOCOL_VERSION, Reply, Request, RunRequest,
};
use skills_sandbox::transport::{FrameReader, send_frame};
use skills_workspace::{WorkspaceError, WorkspaceErrorKind, WorkspaceResult};
use tokio::sync::mpsc;

use crate::capture::read_capped;
use crate::engine::{Outcome, lock};
use crate::fsutil::io_error;
use crate::limits::{Enforcement, RunCgroup};
use crate::sandbox::Sandbox;

/// Most idle slots a supervisor keeps (two processes each); a slot freed
/// beyond that is killed, so a burst of parallel runs does not leave its
/// slots behind until cleanup.
const MAX_IDLE_SLOTS: usize = 4;

/// How long a new supervisor may take to say it is ready.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// Most bytes of `bwrap`'s standard error kept for an error message.
const MAX_START_ERROR: u64 = 4096;

/// How long to wait for the output pipes once everything the run started
/// is gone (only another run holding them could keep them open).
const OUTPUT_GRACE: Duration = Duration::from_secs(2);

#[derive(Debug)]
enum Msg {
    Started,
    Exited(ExitStatus, Notes),
    Failed(FailReason, String),
}

type Pending = Arc<Mutex<HashMap<u64, mpsc::UnboundedSender<Msg>>>>;

/// A slot the host knows: its id and its cgroup.
#[derive(Debug)]
struct SlotState {
    id: u64,
    cgroup: Option<RunCgroup>,
}

/// A running supervisor.
#[derive(Debug)]
pub(crate) struct Supervisor {
    socket: Mutex<Option<OwnedFd>>,
    pending: Pending,
    dead: Arc<AtomicBool>,
    /// The `.venv/` folders (path and inode) bound writable at start.
    venvs: Vec<(PathBuf, u64)>,
    next: AtomicU64,
    /// Slots free for the next run.
    free: Mutex<Vec<SlotState>>,
    enforcement: Arc<Enforcement>,
}

/// The skills' `.venv/` folders with their inodes (what the mounts depend on).
pub(crate) fn venvs(ws_root: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(ws_root.join(skills_workspace::SKILLS_SUBDIR)) {
        for entry in entries.flatten() {
            let venv = entry.path().join(".venv");
            if let Ok(m) = std::fs::symlink_metadata(&venv)
                && m.is_dir()
            {
                out.push((venv, std::os::unix::fs::MetadataExt::ino(&m)));
            }
        }
    }
    out.sort();
    out
}

/// What the supervisor's thread hands back: the request socket once the
/// helper said it is ready, or why it could not start.
type Started = Result<OwnedFd, WorkspaceError>;

impl Supervisor {
    /// Starts `bwrap` for the workspace `ws_root` with the supervisor inside
    /// and waits until it is ready (blocking: spawns a thread and a
    /// process).
    pub(crate) fn start(sandbox: &Sandbox, ws_root: &Path) -> WorkspaceResult<Arc<Self>> {
        let venvs = venvs(ws_root);
        let cmd = sandbox.supervisor_command(ws_root)?;
        let pending: Pending = Arc::default();
        let dead = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let (p, d) = (Arc::clone(&pending), Arc::clone(&dead));
        std::thread::Builder::new()
            .name("skills-sandbox".into())
            .spawn(move || supervise(cmd, &p, &d, &tx))
            .map_err(|e| io_error("starting the sandbox thread", e))?;
        let socket = rx.recv_timeout(START_TIMEOUT).map_err(|_| {
            WorkspaceError::new(
                WorkspaceErrorKind::Unavailable,
                "the sandbox did not start in time",
            )
        })??;
        Ok(Arc::new(Self {
            socket: Mutex::new(Some(socket)),
            pending,
            dead,
            venvs,
            next: AtomicU64::new(0),
            free: Mutex::new(Vec::new()),
            enforcement: Arc::clone(&sandbox.enforcement),
        }))
    }

    /// `true` while the supervisor runs and its mounts match `venvs`.
    pub(crate) fn usable(&self, venvs: &[(PathBuf, u64)]) -> bool {
        !self.dead.load(Ordering::Acquire) && self.venvs == venvs
    }

    fn send(&self, frame: &[u8], fds: &[OwnedFd]) -> bool {
        let guard = lock(&self.socket);
        let Some(socket) = guard.as_ref() else {
            return false;
        };
        let fds: Vec<_> = fds.iter().map(AsFd::as_fd).collect();
        send_frame(socket.as_fd(), frame, &fds).is_ok()
    }

    /// Kills the supervisor and everything inside it: at the end of its
    /// input the supervisor kills every slot and exits, and `bwrap` with it.
    /// (Killing `bwrap` from outside would not do: one killed while it sets
    /// the sandbox up leaves its child waiting forever.)
    pub(crate) fn kill(&self) {
        lock(&self.socket).take();
    }

    /// Runs a command inside the sandbox: `program args` in `cwd` with
    /// exactly `env`, `stdin` fed through a pipe, output captured up to
    /// `cap`, everything killed at `timeout` (counted from the request, so
    /// a command that never starts times out too). `None` when the
    /// supervisor was gone before the command started (it is marked dead,
    /// so the next call starts a new one).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn run(
        &self,
        cwd: &Path,
        program: &Path,
        args: &[OsString],
        env: &BTreeMap<String, String>,
        stdin: Option<&str>,
        timeout: Duration,
        cap: usize,
        file_size: u64,
    ) -> WorkspaceResult<Option<Outcome>> {
        let deadline = tokio::time::Instant::now() + timeout;
        let started = Instant::now();
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let pipe_err = |e: std::io::Error| io_error("the run's pipes", e);
        let (out_r, out_w) = pipe().map_err(pipe_err)?;
        let (err_r, err_w) = pipe().map_err(pipe_err)?;
        let mut fds = vec![out_w, err_w];
        let mut feed = None;
        if let Some(text) = stdin {
            let (in_r, in_w) = pipe().map_err(pipe_err)?;
            fds.push(in_r);
            feed = Some((in_w, text.as_bytes().to_vec()));
        }
        let reused = lock(&self.free).pop();
        let mut slot = match reused {
            Some(s) => s,
            None => SlotState {
                id,
                cgroup: crate::limits::run_cgroup(&self.enforcement).await?,
            },
        };
        let new_slot_cgroups = match (&slot.cgroup, slot.id == id) {
            (Some(c), true) => c.procs().map_err(|e| io_error("the run's cgroup", e))?,
            _ => Vec::new(),
        };
        let request = request(
            id,
            slot.id,
            cwd,
            program,
            args,
            env,
            stdin.is_some(),
            &new_slot_cgroups,
            file_size,
        )?;
        fds.extend(new_slot_cgroups);
        let (tx, mut rx) = mpsc::unbounded_channel();
        lock(&self.pending).insert(id, tx);
        let mut guard = RunGuard {
            sup: self,
            id,
            slot: Some(slot),
            reusable: false,
        };
        if !self.send(&Request::Run(request).encode(), &fds) {
            self.dead.store(true, Ordering::Release);
            // The slot never saw this run; its cgroup is fine.
            if let Some(s) = guard.slot.take() {
                slot = s;
                if let Some(c) = slot.cgroup {
                    c.release();
                }
            }
            return Ok(None);
        }
        drop(fds);
        if let Some((w, bytes)) = feed {
            tokio::spawn(async move {
                if let Ok(mut w) = tokio::net::unix::pipe::Sender::from_owned_fd(w) {
                    use tokio::io::AsyncWriteExt;
                    let _ = w.write_all(&bytes).await;
                }
            });
        }
        let receiver =
            |fd: OwnedFd| tokio::net::unix::pipe::Receiver::from_owned_fd(fd).map_err(pipe_err);
        let out = tokio::spawn(read_capped(receiver(out_r)?, cap));
        let err = tokio::spawn(read_capped(receiver(err_r)?, cap));
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(Msg::Started)) => {}
            Ok(Some(Msg::Failed(reason, message))) => {
                out.abort();
                err.abort();
                return Err(WorkspaceError::new(
                    WorkspaceErrorKind::Spawn,
                    match reason {
                        FailReason::Slot => format!(
                            "the sandbox could not make a slot for the run ({message}); nested user namespaces may be refused here, try SandboxOptions::sandbox_per_run(true)"
                        ),
                        _ => format!("the sandbox refused the run: {message}"),
                    },
                ));
            }
            Ok(Some(Msg::Exited(..)) | None) => {
                out.abort();
                err.abort();
                self.dead.store(true, Ordering::Release);
                return Ok(None);
            }
            // Never started: killed with its slot like any timed-out run.
            Err(_) => {
                drop(guard);
                return Ok(Some(Outcome::new(None, None, None, true, millis(started))));
            }
        }
        let (status, notes, timed_out) = match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(Msg::Exited(status, notes))) => (Some(status), notes, false),
            Ok(_) => {
                out.abort();
                err.abort();
                return Err(gone());
            }
            Err(_) => (None, Notes::default(), true),
        };
        let duration_ms = millis(started);
        let mut warnings = notes_warnings(notes, &self.enforcement);
        if let Some(slot) = guard.slot.as_mut()
            && let Some(c) = slot.cgroup.as_mut()
        {
            warnings.extend(c.warnings(&self.enforcement.limits));
        }
        guard.reusable = !timed_out && !notes.has(Notes::SLOT_SPOILED);
        drop(guard);
        let readers = async { (out.await.ok(), err.await.ok()) };
        // Everything the run started is gone now, so the pipes end; only
        // another run of the session holding one open could keep them.
        let (o, e) = tokio::time::timeout(OUTPUT_GRACE, readers)
            .await
            .unwrap_or_default();
        let exit_code = status.map(ExitStatus::shell_code);
        let mut outcome = Outcome::new(o, e, exit_code, timed_out, duration_ms);
        if exit_code.is_some_and(|c| c != 0)
            && warnings.is_empty()
            && let Some(note) = self.enforcement.fallback_note()
        {
            warnings.push(note);
        }
        outcome.warnings = warnings;
        Ok(Some(outcome))
    }
}

/// The warnings a run's notes call for.
pub(crate) fn notes_warnings(notes: Notes, enforcement: &Enforcement) -> Vec<String> {
    let mut out = Vec::new();
    let limits = &enforcement.limits;
    for (bit, what, size) in [
        (Notes::TMP_FULL, "/tmp", limits.tmp_size),
        (Notes::SHM_FULL, "/dev/shm", limits.shm_size),
    ] {
        if notes.has(bit) {
            let mut w = format!("the run filled its {what}");
            if size > 0 {
                w.push_str(&format!(" ({})", crate::limits::human(size)));
            }
            w.push_str("; writing more there failed");
            out.push(w);
        }
    }
    out
}

/// A pipe, both ends close-on-exec.
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).map_err(std::io::Error::from)
}

/// The request for a run (refusing NUL bytes, which no command line or
/// environment can hold).
#[allow(clippy::too_many_arguments)]
fn request(
    id: u64,
    slot: u64,
    cwd: &Path,
    program: &Path,
    args: &[OsString],
    env: &BTreeMap<String, String>,
    stdin: bool,
    cgroups: &[OwnedFd],
    file_size: u64,
) -> WorkspaceResult<RunRequest> {
    let nul = |b: &[u8]| b.contains(&0);
    if nul(cwd.as_os_str().as_bytes())
        || nul(program.as_os_str().as_bytes())
        || args.iter().any(|a| nul(a.as_bytes()))
        || env
            .iter()
            .any(|(k, v)| nul(k.as_bytes()) || nul(v.as_bytes()))
    {
        return Err(WorkspaceError::new(
            WorkspaceErrorKind::InvalidRequest,
            "the command holds a NUL byte",
        ));
    }
    Ok(RunRequest {
        id,
        slot,
        cwd: cwd.as_os_str().as_bytes().to_vec(),
        program: program.as_os_str().as_bytes().to_vec(),
        args: args.iter().map(|a| a.as_bytes().to_vec()).collect(),
        env: env
            .iter()
            .map(|(k, v)| format!("{k}={v}").into_bytes())
            .collect(),
        stdin,
        cgroups: u8::try_from(cgroups.len()).unwrap_or(u8::MAX),
        file_size: Some(file_size),
    })
}

fn millis(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        self.kill();
        for s in lock(&self.free).drain(..) {
            if let Some(c) = s.cgroup {
                c.remove_later();
            }
        }
    }
}

fn gone() -> WorkspaceError {
    WorkspaceError::new(WorkspaceErrorKind::Spawn, "the sandbox supervisor stopped")
}

/// Gives a run's slot back when the run finished (killing it instead when
/// enough slots are idle), else kills the slot and everything in it
/// (timeout, failure, or the run's future was dropped).
struct RunGuard<'a> {
    sup: &'a Supervisor,
    id: u64,
    slot: Option<SlotState>,
    reusable: bool,
}

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        lock(&self.sup.pending).remove(&self.id);
        let Some(slot) = self.slot.take() else {
            return;
        };
        if self.reusable {
            let mut free = lock(&self.sup.free);
            if free.len() < MAX_IDLE_SLOTS {
                free.push(slot);
                return;
            }
        }
        self.sup
            .send(&Request::Kill { slot: slot.id }.encode(), &[]);
        if let Some(c) = slot.cgroup {
            c.remove_later();
        }
    }
}

/// The supervisor's thread: spawns `bwrap`, waits for the helper to say it
/// is ready (or reports why not), hands back the request socket, then
/// routes the replies until the helper exits (or breaks the protocol: it
/// is then marked dead and no longer used).
fn supervise(
    mut cmd: std::process::Command,
    pending: &Pending,
    dead: &AtomicBool,
    tx: &std::sync::mpsc::Sender<Started>,
) {
    let fail = |dead: &AtomicBool, e: WorkspaceError| {
        dead.store(true, Ordering::Release);
        let _ = tx.send(Err(e));
    };
    let socket = rustix::net::socketpair(
        rustix::net::AddressFamily::UNIX,
        rustix::net::SocketType::STREAM,
        rustix::net::SocketFlags::CLOEXEC,
        None,
    );
    let Ok((ours, theirs)) = socket else {
        return fail(
            dead,
            io_error("the sandbox socket", std::io::Error::last_os_error()),
        );
    };
    cmd.stdin(Stdio::from(theirs))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let spawned = {
        let _gate = crate::spawn_gate::spawning_blocking();
        cmd.spawn()
    };
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            return fail(
                dead,
                WorkspaceError::new(
                    WorkspaceErrorKind::Unavailable,
                    format!("could not start bubblewrap: {e}"),
                ),
            );
        }
    };
    drop(cmd);
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return fail(dead, gone());
    };
    let mut replies = FrameReader::pipe(stdout, MAX_REPLY_FRAME);
    match replies.next_frame().map(|f| f.map(|b| Reply::decode(&b))) {
        Ok(Some(Ok(Reply::Ready { version }))) if version == PROTOCOL_VERSION => {}
        other => {
            // Not ready: `bwrap` failed (its standard error says why), or
            // a helper of another version answered.
            drop(ours);
            let mut why = String::new();
            let _ = stderr.take(MAX_START_ERROR).read_to_string(&mut why);
            let _ = child.wait();
            let why = match other {
                Ok(Some(Ok(Reply::Ready { version }))) => format!(
                    "the sandbox helper speaks protocol {version}, this runtime {PROTOCOL_VERSION}: use the helper of the same build"
                ),
                _ if why.trim().is_empty() => "the sandbox stopped before it was ready".to_owned(),
                _ => format!(
                    "bubblewrap could not set the sandbox up: {}; user namespaces may be restricted here (sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces, or an AppArmor restriction)",
                    why.trim()
                ),
            };
            return fail(
                dead,
                WorkspaceError::new(WorkspaceErrorKind::Unavailable, why),
            );
        }
    }
    drop(stderr);
    if tx.send(Ok(ours)).is_err() {
        // Its input is closed with the unsent socket: it exits.
        let _ = child.wait();
        return;
    }
    loop {
        let msg = match replies.next_frame() {
            Ok(Some(body)) => Reply::decode(&body).ok(),
            _ => None,
        };
        let Some(reply) = msg else {
            break;
        };
        let (id, msg) = match reply {
            Reply::Started { id } => (id, Msg::Started),
            Reply::Exited { id, status, notes } => (id, Msg::Exited(status, notes)),
            Reply::Failed {
                id,
                reason,
                message,
            } => (
                id,
                Msg::Failed(reason, String::from_utf8_lossy(&message).into_owned()),
            ),
            Reply::Ready { .. } => break,
        };
        if let Some(sender) = lock(pending).get(&id) {
            let _ = sender.send(msg);
        }
    }
    // Marked dead, it is replaced at the next run, and ends when the last
    // holder drops it (its input closes).
    dead.store(true, Ordering::Release);
    lock(pending).clear();
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn requests_refuse_nul_bytes() {
        let p = Path::new("/");
        let mut env = BTreeMap::new();
        assert!(request(0, 0, p, p, &["a\0b".into()], &env, false, &[], 0).is_err());
        env.insert("A".to_owned(), "x\0y".to_owned());
        assert!(request(0, 0, p, p, &[], &env, false, &[], 0).is_err());
        env.clear();
        env.insert("A".to_owned(), "1".to_owned());
        let r = request(
            1,
            2,
            p,
            Path::new("/bin/sh"),
            &["-c".into()],
            &env,
            true,
            &[],
            1 << 20,
        )
        .unwrap();
        assert_eq!(r.env, [b"A=1".to_vec()]);
        assert_eq!(r.file_size, Some(1 << 20));
        assert_eq!(r.fd_count(), 3);
    }
}
