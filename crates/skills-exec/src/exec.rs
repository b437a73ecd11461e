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
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use skills_workspace::{
    ExecOutput, ExecRequest, ExecStatus, Interaction, InteractionKind, RunIo, RunResult,
    StagedInput, WorkspaceError, WorkspaceErrorKind, WorkspaceResult, WriteStdinRequest,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tracing::Instrument;

use crate::capture::cap_text;
use crate::engine::{Engine, Launch, Ws, output_globs, unique_id, watch_disk};
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
/// How much of the end of everything printed a session keeps, for its
/// final result's `stdout` (the tail of the transcript).
const MAX_TRANSCRIPT: usize = 32 * 1024;
/// How much of the end of the transcript the prompt hint looks at.
const PROMPT_WINDOW: usize = 4 * 1024;
/// Most numbered options a [`InteractionKind::Choice`] hint lists.
const MAX_OPTIONS: usize = 20;
/// How long an ended session's answer waits for the child to be reaped and
/// its last output read before it carries the final result.
const FINISH_WAIT: Duration = Duration::from_secs(2);

#[derive(Debug)]
struct State {
    buf: Vec<u8>,
    dropped: u64,
    /// The end of everything printed (at most [`MAX_TRANSCRIPT`] bytes).
    transcript: String,
    /// Bytes dropped from the front of `transcript`.
    transcript_dropped: u64,
    last_output: Instant,
    /// When the command ended.
    ended: Option<Instant>,
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
    /// What the request asked to collect (and save) when it ends.
    io: RunIo,
    /// `io`'s globs, normalized (checked before it started).
    globs: Vec<String>,
    /// Its run folder, relative to the workspace root.
    run_dir: String,
    /// The inputs staged for it.
    staged_inputs: Vec<StagedInput>,
    /// Its workspace (weak: the workspace holds the session).
    ws: Weak<Ws>,
    /// The final result, made once when it ended.
    result: tokio::sync::Mutex<Option<RunResult>>,
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
        st.transcript.push_str(&String::from_utf8_lossy(bytes));
        if st.transcript.len() > MAX_TRANSCRIPT {
            let cut = tail_start(&st.transcript, MAX_TRANSCRIPT);
            st.transcript.drain(..cut);
            st.transcript_dropped += cut as u64;
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
        let interaction =
            if status == ExecStatus::Running && st.last_output.elapsed() >= PROMPT_QUIET {
                let recent = &st.transcript[tail_start(&st.transcript, PROMPT_WINDOW)..];
                interaction(recent)
            } else {
                None
            };
        ExecOutput::new(&self.id, status, text)
            .with_exit_code(st.exit_code)
            .with_interaction(interaction)
    }

    /// Types into the session, then answers like [`poll`](Self::poll).
    pub(crate) async fn write(&self, request: &WriteStdinRequest) -> WorkspaceResult<ExecOutput> {
        let mut data = request.chars.clone().into_bytes();
        if request.submit {
            data.push(if self.tty { b'\r' } else { b'\n' });
        }
        self.type_in(data).await?;
        Ok(self.poll(request.yield_ms).await)
    }

    /// Writes `data` to the command's terminal or standard input.
    async fn type_in(&self, data: Vec<u8>) -> WorkspaceResult<()> {
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
        Ok(())
    }

    /// `answer` with the final result once the command ended: the files
    /// the request asked for, collected (and saved) once, the same result
    /// in every later answer.
    pub(crate) async fn finish(
        &self,
        engine: &Engine,
        answer: ExecOutput,
    ) -> WorkspaceResult<ExecOutput> {
        if answer.status == ExecStatus::Running {
            return Ok(answer);
        }
        let mut cached = self.result.lock().await;
        if let Some(result) = &*cached {
            return Ok(answer.with_result(Some(result.clone())));
        }
        // Killed or timed out: the status says so at once, while the child
        // is still being reaped and its last output read. Wait a little
        // for both; a result made before would lose the tail and the exit
        // code for good, so without them this answer has none (the next
        // one will).
        let settled = Instant::now() + FINISH_WAIT;
        loop {
            let done = {
                let st = lock(&self.state);
                st.child_done && st.reader_done
            };
            if done {
                break;
            }
            if Instant::now() >= settled {
                return Ok(answer);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let mut result = RunResult::default();
        {
            let st = lock(&self.state);
            result.stdout = if st.transcript_dropped > 0 {
                format!(
                    "[… {} earlier bytes dropped …]\n{}",
                    st.transcript_dropped, st.transcript
                )
            } else {
                st.transcript.clone()
            };
            result.exit_code = st.exit_code;
            result.timed_out = st.timed_out;
            let ended = st.ended.unwrap_or_else(Instant::now);
            result.duration_ms =
                u64::try_from(ended.duration_since(self.started).as_millis()).unwrap_or(u64::MAX);
        }
        result.run_dir = self.run_dir.clone();
        result.staged_inputs = self.staged_inputs.clone();
        let mut warnings = Vec::new();
        if !self.globs.is_empty() {
            // A collection that fails is a warning: the output this answer
            // carries was taken from the session already, and must reach
            // the model.
            match self.ws.upgrade() {
                None => warnings.push(format!(
                    "the workspace of exec session {} was removed; no files collected",
                    self.id
                )),
                Some(ws) => {
                    let collected = engine
                        .collect_outputs(
                            &ws,
                            &self.io,
                            self.globs.clone(),
                            &mut result,
                            &mut warnings,
                        )
                        .instrument(tracing::info_span!(
                            "workspace.collect",
                            session = ws.session_id.as_str(),
                            exec = self.id.as_str()
                        ))
                        .await;
                    if let Err(err) = collected {
                        warnings.push(format!("collecting the output files failed: {err}"));
                    }
                }
            }
        }
        result.warnings = warnings;
        *cached = Some(result.clone());
        Ok(answer.with_result(Some(result)))
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

/// Where the last `max` bytes of `text` start (on a character boundary).
fn tail_start(text: &str, max: usize) -> usize {
    let from = text.len().saturating_sub(max);
    (from..text.len())
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(text.len())
}

/// `text` without terminal escape sequences (CSI `ESC [ … letter`, OSC
/// `ESC ] … BEL`, two-byte `ESC x`) and carriage returns.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.next() {
                Some('[') => {
                    for c in chars.by_ref() {
                        if c.is_ascii_alphabetic() || c == '~' {
                            break;
                        }
                    }
                }
                Some(']') => {
                    while let Some(c) = chars.next() {
                        if c == '\u{7}' || (c == '\u{1b}' && chars.next_if_eq(&'\\').is_some()) {
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

/// A numbered option (`1) csv`, `2. json`, `[3] xml`), trimmed.
fn numbered_option(line: &str) -> Option<&str> {
    let t = line.trim();
    let rest = t.strip_prefix('[').unwrap_or(t);
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 || digits > 3 {
        return None;
    }
    let after = &rest[digits..];
    let sep = if t.starts_with('[') { "]" } else { ")" };
    (after.starts_with(sep) || (!t.starts_with('[') && after.starts_with(". ")))
        .then_some(t)
        .filter(|_| after.len() > 1)
}

/// The best-effort hint for output `recent` (the end of what a running
/// command printed, quiet for a while): `None` unless its last line looks
/// like a prompt; then what it seems to ask for.
fn interaction(recent: &str) -> Option<Interaction> {
    let text = plain(recent);
    let mut lines: Vec<&str> = text.split('\n').collect();
    let last = lines.pop().unwrap_or("").trim();
    if !looks_like_prompt(last) {
        return None;
    }
    let lower = last.to_lowercase();
    let kind = if ["y/n", "yes/no"].iter().any(|k| lower.contains(k)) {
        InteractionKind::Confirm
    } else if ["password", "passphrase"].iter().any(|k| lower.contains(k)) {
        InteractionKind::Secret
    } else {
        InteractionKind::Line
    };
    // Numbered options just above the prompt: a choice.
    let mut options: Vec<String> = lines
        .iter()
        .rev()
        .map(|l| l.trim())
        .skip_while(|l| l.is_empty())
        .take_while(|l| numbered_option(l).is_some())
        .take(MAX_OPTIONS)
        .map(str::to_owned)
        .collect();
    options.reverse();
    if kind == InteractionKind::Line && options.len() >= 2 {
        return Some(Interaction::new(InteractionKind::Choice, last).with_options(options));
    }
    Some(Interaction::new(kind, last))
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
    #[cfg(feature = "container")]
    if matches!(engine.cfg.launcher, crate::engine::Launcher::Container(_)) {
        return Err(WorkspaceError::new(
            WorkspaceErrorKind::Unsupported,
            "the `container` runtime does not offer interactive sessions; use skill_run \
             (a run per command), or the local or sandbox runtime for a terminal",
        ));
    }
    let span = tracing::info_span!("workspace.exec", session = session_id, skill = %request.spec.skill, tty = request.tty);
    async {
        let (ws, _) = engine.workspace(session_id).await?;
        engine
            .ensure_staged(session_id, &ws, &request.spec.skill)
            .await?;
        engine.check_disk(&ws, "terminal refused").await?;
        prune_finished(&ws);
        // Checked before anything starts.
        let globs = output_globs(&request.io)?;
        let slot = Slot::take(engine, &ws)?;
        let staged_inputs = if request.spec.inputs.is_empty() {
            Vec::new()
        } else {
            engine
                .stage_inputs_in(&ws, &request.spec.inputs)
                .instrument(tracing::info_span!(
                    "workspace.stage.inputs",
                    count = request.spec.inputs.len()
                ))
                .await?
        };
        let prepared = engine
            .prepare(
                &ws,
                Launch {
                    spec: &request.spec,
                    editor_text: request.io.editor_text.as_deref(),
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
                transcript: String::new(),
                transcript_dropped: 0,
                last_output: Instant::now(),
                ended: None,
                child_done: false,
                reader_done: false,
                exit_code: None,
                timed_out: false,
            }),
            input: tokio::sync::Mutex::new(input),
            io: request.io.clone(),
            globs,
            run_dir: prepared.run_dir.clone(),
            staged_inputs,
            ws: Arc::downgrade(&ws),
            result: tokio::sync::Mutex::new(None),
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
                        st.ended = Some(Instant::now());
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
        if let Some(text) = &request.io.stdin {
            // Typed beside the first answer, never before it: a program that
            // does not read (or reads slowly, or already ended) must not
            // hold the call until it times out, nor turn a started session
            // into an error that loses its id.
            let typing = Arc::clone(&session);
            let data = text.clone().into_bytes();
            tokio::spawn(
                async move {
                    if let Err(err) = typing.type_in(data).await {
                        tracing::debug!(%err, "the exec session's stdin was not fully typed");
                    }
                }
                .in_current_span(),
            );
        }
        let answer = session.poll(request.yield_ms).await;
        session.finish(engine, answer).await
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
    fn hints() {
        let hint = |text: &str| interaction(text).map(|i| (i.kind, i.prompt, i.options));
        assert_eq!(hint("working...\r\ndone.\r\n"), None);
        assert_eq!(
            hint("Name: "),
            Some((InteractionKind::Line, "Name:".to_owned(), vec![]))
        );
        assert_eq!(
            hint("\u{1b}[1mOverwrite? [y/N]\u{1b}[0m "),
            Some((
                InteractionKind::Confirm,
                "Overwrite? [y/N]".to_owned(),
                vec![]
            ))
        );
        assert_eq!(
            hint("Password: ").map(|h| h.0),
            Some(InteractionKind::Secret)
        );
        assert_eq!(
            hint("Formats:\r\n  1) csv\r\n  2) json\r\n[3] xml\r\nChoose: "),
            Some((
                InteractionKind::Choice,
                "Choose:".to_owned(),
                vec![
                    "1) csv".to_owned(),
                    "2) json".to_owned(),
                    "[3] xml".to_owned()
                ]
            ))
        );
        // One numbered line is not a menu.
        assert_eq!(
            hint("1. only\nPick: ").map(|h| h.0),
            Some(InteractionKind::Line)
        );
        assert_eq!(tail_start("héllo", 4), 3);
    }

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
