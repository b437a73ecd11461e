//! Interactive exec sessions (F-EXE-9): a command on a terminal (a PTY) or
//! on pipes, typed into and polled by the model.
//!
//! The terminal is opened with `rustix`'s safe PTY calls; the command gets it
//! as its controlling terminal through util-linux `setsid -w -c`, so no
//! `unsafe` `pre_exec` hook is needed.
//!
//! Bounded (threat model: H7, H9): at most
//! [`WorkspaceLimits::max_exec_sessions`](crate::WorkspaceLimits) running
//! per workspace and
//! [`max_exec_sessions_total`](crate::WorkspaceLimits) per runtime, each
//! killed at its lifetime and when the workspace passes its disk cap; at
//! most [`MAX_FINISHED_EXECS`] finished ones are kept for a last look.

use std::io::{Read, Write};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use skills_workspace::{
    ExecOutput, ExecRequest, ExecStatus, WorkspaceError, WorkspaceErrorKind, WorkspaceResult,
    WriteStdinRequest,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tracing::Instrument;

use crate::capture::cap_text;
use crate::engine::{Engine, Launch, Ws, unique_id, watch_disk};
use crate::kill::{kill_group, sweep};
use crate::quota::MAX_FINISHED_EXECS;

/// Most unread output a session keeps (the oldest is dropped beyond it).
const MAX_BUFFER: usize = 1024 * 1024;
/// Most output one answer carries (head and tail kept).
const MAX_ANSWER: usize = 32 * 1024;
/// Default wait for output, in milliseconds.
const DEFAULT_YIELD_MS: u64 = 300;
/// Longest wait for output, in milliseconds.
const MAX_YIELD_MS: u64 = 30_000;
/// Quiet time after which output that ends like a prompt counts as waiting.
const PROMPT_QUIET: Duration = Duration::from_millis(200);

#[derive(Debug)]
struct State {
    buf: Vec<u8>,
    dropped: u64,
    last_line: String,
    last_output: Instant,
    child_done: bool,
    reader_done: bool,
    exit_code: Option<i32>,
    timed_out: bool,
}

#[derive(Debug)]
enum Input {
    Pty(std::fs::File),
    Pipe(tokio::process::ChildStdin),
    Closed,
}

/// One interactive command.
#[derive(Debug)]
pub(crate) struct ExecSession {
    id: String,
    started: Instant,
    /// Its place among the sessions running at once, given back as soon as
    /// it is killed or its command ends (H9).
    slot: Mutex<Option<Slot>>,
    marker: String,
    pgid: Option<u32>,
    tty: bool,
    killed: AtomicBool,
    state: Mutex<State>,
    input: tokio::sync::Mutex<Input>,
}

fn lock_usage(ws: &Ws) -> std::sync::MutexGuard<'_, crate::quota::Usage> {
    crate::engine::lock(&ws.usage)
}

fn lock(m: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl ExecSession {
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    fn push(&self, bytes: &[u8]) {
        let mut st = lock(&self.state);
        st.buf.extend_from_slice(bytes);
        if st.buf.len() > MAX_BUFFER {
            let extra = st.buf.len() - MAX_BUFFER;
            st.buf.drain(..extra);
            st.dropped += extra as u64;
        }
        st.last_output = Instant::now();
        let text = String::from_utf8_lossy(bytes);
        if let Some(line) = text.rsplit('\n').next() {
            if text.contains('\n') {
                st.last_line = line.to_owned();
            } else {
                st.last_line.push_str(line);
                if st.last_line.len() > 512 {
                    let cut = st.last_line.len() - 512;
                    let cut = (cut..st.last_line.len())
                        .find(|i| st.last_line.is_char_boundary(*i))
                        .unwrap_or(0);
                    st.last_line.drain(..cut);
                }
            }
        }
    }

    /// Gives its place among the running sessions back.
    fn release(&self) {
        self.slot.lock().unwrap_or_else(|p| p.into_inner()).take();
    }

    /// `true` once the command ended (exited, killed, timed out).
    fn finished(&self) -> bool {
        self.status(&lock(&self.state)) != ExecStatus::Running
    }

    fn status(&self, st: &State) -> ExecStatus {
        if self.killed.load(Ordering::SeqCst) {
            ExecStatus::Killed
        } else if st.timed_out {
            ExecStatus::TimedOut
        } else if st.child_done && st.reader_done {
            ExecStatus::Exited
        } else {
            ExecStatus::Running
        }
    }

    /// Output since the last answer, waiting up to `yield_ms` for some.
    pub(crate) async fn poll(&self, yield_ms: Option<u64>) -> ExecOutput {
        let wait = Duration::from_millis(yield_ms.unwrap_or(DEFAULT_YIELD_MS).min(MAX_YIELD_MS));
        let deadline = Instant::now() + wait;
        loop {
            let (has_output, quiet, status) = {
                let st = lock(&self.state);
                (
                    !st.buf.is_empty(),
                    st.last_output.elapsed() >= Duration::from_millis(50),
                    self.status(&st),
                )
            };
            if status != ExecStatus::Running || (has_output && quiet) || Instant::now() >= deadline
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let mut st = lock(&self.state);
        let status = self.status(&st);
        let bytes = std::mem::take(&mut st.buf);
        let dropped = std::mem::take(&mut st.dropped);
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        if dropped > 0 {
            text = format!("[… {dropped} earlier bytes dropped …]\n{text}");
        }
        let (text, _) = cap_text(&text, MAX_ANSWER);
        let waiting = status == ExecStatus::Running
            && st.last_output.elapsed() >= PROMPT_QUIET
            && looks_like_prompt(&st.last_line);
        ExecOutput::new(&self.id, status, text)
            .with_exit_code(st.exit_code)
            .with_waiting_for_input(waiting)
    }

    /// Types into the session, then answers like [`poll`](Self::poll).
    pub(crate) async fn write(&self, request: &WriteStdinRequest) -> WorkspaceResult<ExecOutput> {
        let mut data = request.chars.clone().into_bytes();
        if request.submit {
            data.push(if self.tty { b'\r' } else { b'\n' });
        }
        let mut input = self.input.lock().await;
        let result = match &mut *input {
            Input::Pty(file) => {
                let mut file = file.try_clone().map_err(|e| {
                    WorkspaceError::new(WorkspaceErrorKind::Io, format!("terminal: {e}"))
                })?;
                tokio::task::spawn_blocking(move || file.write_all(&data))
                    .await
                    .map_err(|e| WorkspaceError::new(WorkspaceErrorKind::Other, e.to_string()))?
            }
            Input::Pipe(pipe) => pipe.write_all(&data).await,
            Input::Closed => Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "input closed",
            )),
        };
        drop(input);
        if let Err(e) = result {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::InvalidRequest,
                format!("exec session {} does not take input any more: {e}", self.id),
            ));
        }
        Ok(self.poll(request.yield_ms).await)
    }

    /// Kills the session's whole process tree; `true` when it was running.
    pub(crate) async fn kill(&self) -> bool {
        let running = self.status(&lock(&self.state)) == ExecStatus::Running;
        if running {
            self.killed.store(true, Ordering::SeqCst);
        }
        let marker = self.marker.clone();
        let pgid = self.pgid;
        let _ = tokio::task::spawn_blocking(move || sweep(&marker, pgid)).await;
        self.release();
        *self.input.lock().await = Input::Closed;
        running
    }
}

/// `true` when a line looks like it asks for input.
fn looks_like_prompt(line: &str) -> bool {
    let t = line.trim_end();
    if t.is_empty() {
        return false;
    }
    let lower = t.to_lowercase();
    t.ends_with(':')
        || t.ends_with('?')
        || t.ends_with('>')
        || t.ends_with('$')
        || t.ends_with('#')
        || lower.ends_with("(y/n)")
        || lower.ends_with("[y/n]")
        || lower.ends_with("password")
}

/// A place among the interactive sessions running at once (H9), given
/// back when dropped (when the session's command ended).
#[derive(Debug)]
pub(crate) struct Slot {
    ws: Arc<AtomicUsize>,
    total: Arc<AtomicUsize>,
}

impl Slot {
    /// Takes a place, or refuses with
    /// [`WorkspaceErrorKind::LimitExceeded`] when the workspace or the
    /// runtime runs as many sessions as allowed.
    fn take(engine: &Engine, ws: &Arc<Ws>) -> WorkspaceResult<Self> {
        let limits = &engine.cfg.limits;
        let taken = |counter: &AtomicUsize, max: usize| {
            counter
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                    (n < max).then_some(n + 1)
                })
                .is_ok()
        };
        if !taken(&ws.live_execs, limits.max_exec_sessions) {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::LimitExceeded,
                format!(
                    "this session already runs {} interactive commands, the most allowed; kill \
                     one (kill_exec) or wait for one to end (threat model H9)",
                    limits.max_exec_sessions
                ),
            ));
        }
        if !taken(&engine.live_execs, limits.max_exec_sessions_total) {
            ws.live_execs.fetch_sub(1, Ordering::AcqRel);
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::LimitExceeded,
                format!(
                    "the runtime already runs {} interactive commands, the most allowed; try \
                     again when one ended (threat model H9)",
                    limits.max_exec_sessions_total
                ),
            ));
        }
        Ok(Self {
            ws: Arc::clone(&ws.live_execs),
            total: Arc::clone(&engine.live_execs),
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.ws.fetch_sub(1, Ordering::AcqRel);
        self.total.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Forgets the oldest finished sessions of `ws` beyond
/// [`MAX_FINISHED_EXECS`] (their output buffers are memory).
fn prune_finished(ws: &Ws) {
    let mut finished: Vec<(Instant, String)> = ws
        .execs
        .iter()
        .filter(|e| e.value().finished())
        .map(|e| (e.value().started, e.key().clone()))
        .collect();
    if finished.len() <= MAX_FINISHED_EXECS {
        return;
    }
    finished.sort();
    let extra = finished.len() - MAX_FINISHED_EXECS;
    for (_, id) in finished.into_iter().take(extra) {
        ws.execs.remove(&id);
    }
}

/// Starts an exec session and answers with its first output.
pub(crate) async fn start(
    engine: &Engine,
    session_id: &str,
    request: &ExecRequest,
) -> WorkspaceResult<ExecOutput> {
    let span = tracing::info_span!("workspace.exec", session = session_id, skill = %request.spec.skill, tty = request.tty);
    async {
        let (ws, _) = engine.workspace(session_id).await?;
        engine
            .ensure_staged(session_id, &ws, &request.spec.skill)
            .await?;
        engine.check_disk(&ws, "terminal refused").await?;
        prune_finished(&ws);
        let slot = Slot::take(engine, &ws)?;
        if !request.spec.inputs.is_empty() {
            engine.stage_inputs_in(&ws, &request.spec.inputs).await?;
        }
        let prepared = engine
            .prepare(
                &ws,
                Launch {
                    spec: &request.spec,
                    editor_text: None,
                    tty: request.tty,
                },
            )
            .await?;
        // This folder stays the session's; the next command gets a new one.
        crate::engine::make_spare_run_dir(&ws);
        // Its lifetime, whatever the request asks (H9).
        let lifetime = engine
            .cfg
            .max_timeout
            .min(engine.cfg.limits.max_exec_lifetime);
        let timeout = request
            .spec
            .timeout
            .map_or(lifetime, Duration::from_secs)
            .min(lifetime);
        let mut cmd = engine.spawn_command(&prepared, None, Vec::new())?;
        cmd.kill_on_drop(true);
        #[cfg(unix)]
        cmd.process_group(0);
        let spawn_err = |e: std::io::Error| {
            WorkspaceError::new(
                WorkspaceErrorKind::Spawn,
                format!("could not start {}: {e}", prepared.program.display()),
            )
        };
        let gate = crate::spawn_gate::spawning().await;
        let (mut child, input, pty_reader) = if request.tty {
            let (master, slave) = open_pty().map_err(|e| {
                WorkspaceError::new(
                    WorkspaceErrorKind::Unavailable,
                    format!("could not open a terminal: {e}"),
                )
            })?;
            let s1 = slave.try_clone().map_err(spawn_err)?;
            let s2 = slave.try_clone().map_err(spawn_err)?;
            cmd.stdin(Stdio::from(slave))
                .stdout(Stdio::from(s1))
                .stderr(Stdio::from(s2));
            let child = cmd.spawn().map_err(spawn_err)?;
            drop(cmd);
            let reader = master.try_clone().map_err(spawn_err)?;
            (child, Input::Pty(master), Some(reader))
        } else {
            cmd.stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = cmd.spawn().map_err(spawn_err)?;
            let input = child.stdin.take().map_or(Input::Closed, Input::Pipe);
            (child, input, None)
        };
        drop(gate);
        let session = Arc::new(ExecSession {
            id: format!("exec-{}", unique_id()),
            started: Instant::now(),
            slot: Mutex::new(Some(slot)),
            marker: prepared.marker.clone(),
            pgid: child.id(),
            tty: request.tty,
            killed: AtomicBool::new(false),
            state: Mutex::new(State {
                buf: Vec::new(),
                dropped: 0,
                last_line: String::new(),
                last_output: Instant::now(),
                child_done: false,
                reader_done: false,
                exit_code: None,
                timed_out: false,
            }),
            input: tokio::sync::Mutex::new(input),
        });
        // Readers.
        if let Some(mut master) = pty_reader {
            let s = Arc::clone(&session);
            tokio::task::spawn_blocking(move || {
                let mut buf = [0u8; 8192];
                loop {
                    match master.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => s.push(&buf[..n]),
                    }
                }
                lock(&s.state).reader_done = true;
            });
        } else {
            let out = child.stdout.take();
            let err = child.stderr.take();
            let s = Arc::clone(&session);
            tokio::spawn(async move {
                let pump = |pipe: Option<Box<dyn tokio::io::AsyncRead + Unpin + Send>>,
                            s: Arc<ExecSession>| async move {
                    if let Some(mut pipe) = pipe {
                        let mut buf = [0u8; 8192];
                        loop {
                            match pipe.read(&mut buf).await {
                                Ok(0) | Err(_) => break,
                                Ok(n) => s.push(&buf[..n]),
                            }
                        }
                    }
                };
                let o = out.map(|p| Box::new(p) as Box<dyn tokio::io::AsyncRead + Unpin + Send>);
                let e = err.map(|p| Box::new(p) as Box<dyn tokio::io::AsyncRead + Unpin + Send>);
                tokio::join!(pump(o, Arc::clone(&s)), pump(e, Arc::clone(&s)));
                lock(&s.state).reader_done = true;
            });
        }
        // Waiter: exit, timeout, the disk cap, leftovers.
        {
            let s = Arc::clone(&session);
            let (watched, limits) = (Arc::clone(&ws), engine.cfg.limits);
            let ended_in = Arc::clone(&ws);
            tokio::spawn(
                async move {
                    let status = tokio::select! {
                        biased;
                        waited = tokio::time::timeout(timeout, child.wait()) => match waited {
                            Ok(st) => st.ok(),
                            Err(_) => {
                                lock(&s.state).timed_out = true;
                                let (m, p) = (s.marker.clone(), s.pgid);
                                let _ = tokio::task::spawn_blocking(move || sweep(&m, p)).await;
                                child.wait().await.ok()
                            }
                        },
                        over = watch_disk(watched, limits) => {
                            s.push(format!("\r\n[{}]\r\n", over.message()).as_bytes());
                            s.killed.store(true, Ordering::SeqCst);
                            let (m, p) = (s.marker.clone(), s.pgid);
                            let _ = tokio::task::spawn_blocking(move || sweep(&m, p)).await;
                            child.wait().await.ok()
                        }
                    };
                    {
                        let mut st = lock(&s.state);
                        st.child_done = true;
                        st.exit_code = status.and_then(|s| s.code());
                    }
                    s.release();
                    // What it wrote since the last look is measured before
                    // the next run (H7).
                    lock_usage(&ended_in).unmeasured = crate::quota::UNMEASURED_SLACK;
                    if let Some(p) = s.pgid {
                        kill_group(p);
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    if !lock(&s.state).reader_done {
                        let (m, p) = (s.marker.clone(), s.pgid);
                        let _ = tokio::task::spawn_blocking(move || sweep(&m, p)).await;
                    }
                    *s.input.lock().await = Input::Closed;
                }
                .in_current_span(),
            );
        }
        engine.add_exec(&ws, Arc::clone(&session));
        Ok(session.poll(request.yield_ms).await)
    }
    .instrument(span)
    .await
}

/// Opens a terminal pair: the master (ours) and the slave (the command's).
#[cfg(target_os = "linux")]
fn open_pty() -> std::io::Result<(std::fs::File, std::fs::File)> {
    use rustix::fs::{Mode, OFlags};
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)?;
    grantpt(&master)?;
    unlockpt(&master)?;
    let name = ptsname(&master, Vec::new())?;
    let slave = rustix::fs::open(
        name.as_c_str(),
        OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let _ = rustix::termios::tcsetwinsize(
        &master,
        rustix::termios::Winsize {
            ws_row: 24,
            ws_col: 120,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    );
    Ok((std::fs::File::from(master), std::fs::File::from(slave)))
}

#[cfg(not(target_os = "linux"))]
fn open_pty() -> std::io::Result<(std::fs::File, std::fs::File)> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "terminals are supported on Linux only",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts() {
        assert!(looks_like_prompt("Name: "));
        assert!(looks_like_prompt("Continue? "));
        assert!(looks_like_prompt(">>> "));
        assert!(looks_like_prompt("Proceed (y/n)"));
        assert!(!looks_like_prompt("done."));
        assert!(!looks_like_prompt(""));
    }
}
