//! One long-lived bubblewrap per workspace (F-EXE-8, run overhead).
//!
//! Creating bubblewrap's namespaces and mounts costs several times a plain
//! process start, so the sandbox runtime starts one `bwrap` per workspace,
//! with exactly the confinement a single run gets (see [`crate::sandbox`]),
//! running a small `perl` supervisor (`SCRIPT`). Each command runs in a user
//! and PID namespace of its own nested in the sandbox's, so a command and
//! everything it forked (background, `setsid`, double fork) are gone when the
//! command exits or the run is killed, as with a `bwrap` per run. Standard
//! output and error come back through FIFOs in the run folder; standard input
//! is a file written there beforehand (or `/dev/null`).
//!
//! The `bwrap` is spawned from a thread that lives as long as it does (its
//! `--die-with-parent` follows the spawning thread), and is killed when the
//! workspace is cleaned up or the supervisor is dropped. When a skill's
//! `.venv/` appears or is replaced (its bind mount is fixed when `bwrap`
//! starts), a new supervisor is started and the old one exits once its
//! running commands are done.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use skills_core::{WorkspaceError, WorkspaceErrorKind, WorkspaceResult};
use tokio::sync::mpsc;

use crate::capture::read_capped;
use crate::engine::{Outcome, lock};
use crate::fsutil::io_error;
use crate::sandbox::Sandbox;

/// The supervisor, run by `perl` inside `bwrap` (`perl` is part of every
/// Debian and Ubuntu system; without it each run starts its own `bwrap`).
/// `$ARGV[0]` and `$ARGV[1]` are the numbers of the `unshare` and `prctl`
/// system calls. It makes itself non-dumpable, so no command can read or
/// write its memory through `/proc`.
///
/// Requests on standard input: `r ID SLOT LEN` then LEN bytes of
/// NUL-terminated fields (cwd, stdin file or empty, stdout FIFO, stderr FIFO,
/// the number N of variables, N `NAME=VALUE`, the program and its
/// arguments), or `k ID SLOT` (kill). Replies: `s ID` (started), `x ID CODE`
/// (exited, everything it started gone), `e ID` (could not start).
///
/// A slot is a child in a process group of its own that entered a new user
/// and PID namespace and forked that namespace's PID 1: a minimal init with
/// `PR_SET_PDEATHSIG` = `SIGKILL` that takes one request at a time, forks
/// the command, reaps until the command exits, then kills and reaps
/// everything left in its namespace (`kill(-1)` from PID 1) before it
/// reports the exit, so the next run in that slot starts in an empty
/// namespace. The host hands each slot to one run at a time; a run that is
/// killed (its slot's group gets `SIGKILL`) takes its slot with it: the init
/// dies with its parent, and the namespace with it.
const SCRIPT: &str = r#"use strict; use POSIX ();
my ($UNSHARE, $PRCTL) = @ARGV;
syscall($PRCTL + 0, 4, 0, 0, 0, 0);
$SIG{CHLD} = 'IGNORE'; $SIG{PIPE} = 'IGNORE';
open(my $reply, '>&', \*STDOUT) or die; $reply->autoflush(1);
open(STDOUT, '>', '/dev/null'); open(STDERR, '>', '/dev/null');
binmode STDIN;
my %slots;
while (my $line = <STDIN>) {
  chomp $line;
  my ($op, $id, $slot, $len) = split / /, $line;
  if ($op eq 'r') {
    my $buf = '';
    while (length($buf) < $len) { read(STDIN, $buf, $len - length($buf), length($buf)) or last; }
    my $s = $slots{$slot} ||= slot();
    unless ($s && print { $s->[1] } "$id $len\n$buf") { print $reply "e $id\n"; }
  } elsif ($op eq 'k') {
    my $s = delete $slots{$slot};
    if ($s) { kill('KILL', -$s->[0], $s->[0]); close $s->[1]; }
  }
}
close $_->[1] for values %slots;
1 while wait() != -1;
sub slot {
  pipe(my $r, my $w) or return undef;
  my $pid = fork;
  return undef unless defined $pid;
  if ($pid == 0) {
    close $w; close STDIN;
    $SIG{CHLD} = 'DEFAULT';
    setpgrp(0, 0);
    my ($uid, $gid) = ($>, $) + 0);
    POSIX::_exit(1) unless syscall($UNSHARE + 0, 0x10000000 | 0x20000000) == 0;
    if ($uid != 0) {
      for (['setgroups', 'deny'], ['uid_map', "$uid $uid 1"], ['gid_map', "$gid $gid 1"]) {
        if (open(my $fh, '>', "/proc/self/$_->[0]")) { print $fh $_->[1]; close $fh; }
      }
    }
    my $b = fork;
    init($r) if defined $b && $b == 0;
    close $r;
    waitpid($b, 0) if defined $b;
    POSIX::_exit(0);
  }
  close $r; $w->autoflush(1); setpgrp($pid, $pid);
  return [$pid, $w];
}
sub init {
  my ($r) = @_;
  syscall($PRCTL + 0, 1, 9, 0, 0, 0);
  binmode $r;
  while (my $hdr = <$r>) {
    my ($id, $len) = split / /, $hdr;
    my $data = '';
    while (length($data) < $len) { read($r, $data, $len - length($data), length($data)) or POSIX::_exit(0); }
    my ($cwd, $in, $out, $err, $n, @rest) = split /\0/, $data, -1; pop @rest;
    my $c = fork;
    if (defined $c && $c == 0) {
      close $r;
      unless (open(STDIN, '<', $in eq '' ? '/dev/null' : $in) && open(STDOUT, '>', $out) && open(STDERR, '>', $err)) {
        print $reply "e $id\n"; POSIX::_exit(1);
      }
      print $reply "s $id\n";
      unless (chdir $cwd) { print STDERR "cd $cwd: $!\n"; POSIX::_exit(126); }
      %ENV = map { split /=/, $_, 2 } @rest[0 .. $n - 1];
      my @argv = @rest[$n .. $#rest];
      exec { $argv[0] } @argv;
      print STDERR "$argv[0]: $!\n"; POSIX::_exit(127);
    }
    my $st = 125 << 8;
    if (defined $c) { while ((my $w = wait()) != -1) { if ($w == $c) { $st = $?; last; } } }
    kill('KILL', -1);
    1 while wait() != -1;
    my $code = ($st & 127) ? 128 + ($st & 127) : $st >> 8;
    print $reply "x $id $code\n";
  }
  POSIX::_exit(0);
}
"#;

/// Where `perl` is looked for inside the sandbox (the system folders are the
/// host's, read-only).
const PERL_PATHS: [&str; 2] = ["/usr/bin/perl", "/bin/perl"];

/// The numbers of the `unshare` and `prctl` system calls here.
#[cfg(target_arch = "x86_64")]
const SYSCALLS: Option<(u32, u32)> = Some((272, 157));
#[cfg(target_arch = "aarch64")]
const SYSCALLS: Option<(u32, u32)> = Some((97, 167));
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const SYSCALLS: Option<(u32, u32)> = None;

/// `perl` at a fixed system path with the system call numbers, when runs
/// can use a long-lived sandbox on this machine.
pub(crate) fn helpers() -> Option<Helpers> {
    let (unshare, prctl) = SYSCALLS?;
    let perl = PERL_PATHS.iter().map(PathBuf::from).find(|p| p.is_file())?;
    Some(Helpers {
        perl,
        unshare,
        prctl,
    })
}

/// What the supervisor needs.
#[derive(Debug, Clone)]
pub(crate) struct Helpers {
    pub(crate) perl: PathBuf,
    pub(crate) unshare: u32,
    pub(crate) prctl: u32,
}

impl Helpers {
    /// `perl -e SCRIPT UNSHARE PRCTL`.
    pub(crate) fn supervisor_args(&self) -> Vec<String> {
        vec![
            "-e".to_owned(),
            SCRIPT.to_owned(),
            self.unshare.to_string(),
            self.prctl.to_string(),
        ]
    }

    /// A check that a PID namespace can be nested here: `perl -e PROBE`.
    pub(crate) fn probe_args(&self) -> Vec<String> {
        vec![
            "-e".to_owned(),
            format!(
                "syscall({}, 0x30000000) == 0 or exit 3; my $p = fork; if (!$p) {{ exec {{'/bin/sh'}} '/bin/sh', '-c', 'exit 0'; exit 4 }} waitpid($p, 0); exit($? >> 8)",
                self.unshare
            ),
        ]
    }
}

#[derive(Debug)]
enum Msg {
    Started,
    Exited(i32),
    Failed,
}

type Pending = Arc<Mutex<HashMap<u64, mpsc::UnboundedSender<Msg>>>>;

/// A running supervisor.
#[derive(Debug)]
pub(crate) struct Supervisor {
    stdin: Mutex<Option<std::process::ChildStdin>>,
    pending: Pending,
    dead: Arc<AtomicBool>,
    pid: u32,
    /// The `.venv/` folders (path and inode) bound writable at start.
    venvs: Vec<(PathBuf, u64)>,
    next: AtomicU64,
    /// Slots free for the next run.
    free: Mutex<Vec<u64>>,
}

/// The skills' `.venv/` folders with their inodes (what the mounts depend on).
pub(crate) fn venvs(ws_root: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(ws_root.join(skills_core::SKILLS_SUBDIR)) {
        for entry in entries.flatten() {
            let venv = entry.path().join(".venv");
            if let Ok(m) = std::fs::symlink_metadata(&venv)
                && m.is_dir()
            {
                #[cfg(unix)]
                let ino = std::os::unix::fs::MetadataExt::ino(&m);
                #[cfg(not(unix))]
                let ino = 0;
                out.push((venv, ino));
            }
        }
    }
    out.sort();
    out
}

impl Supervisor {
    /// Starts `bwrap` for the workspace `ws_root` with the supervisor inside
    /// (blocking: spawns a thread and a process).
    pub(crate) fn start(sandbox: &Sandbox, ws_root: &Path) -> WorkspaceResult<Arc<Self>> {
        let Some(helpers) = sandbox.helpers() else {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::Unavailable,
                "no perl for the sandbox supervisor",
            ));
        };
        let venvs = venvs(ws_root);
        let args = sandbox.args(ws_root, ws_root, &helpers.perl, &helpers.supervisor_args())?;
        let program = sandbox.program().to_path_buf();
        let pending: Pending = Arc::default();
        let dead = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let (p, d) = (Arc::clone(&pending), Arc::clone(&dead));
        std::thread::Builder::new()
            .name("skills-sandbox".into())
            .spawn(move || supervise(&program, &args, &p, &d, &tx))
            .map_err(|e| io_error("starting the sandbox thread", e))?;
        let (stdin, pid) = rx
            .recv()
            .map_err(|_| {
                WorkspaceError::new(WorkspaceErrorKind::Spawn, "the sandbox thread stopped")
            })?
            .map_err(|e| {
                WorkspaceError::new(
                    WorkspaceErrorKind::Spawn,
                    format!("could not start bubblewrap: {e}"),
                )
            })?;
        Ok(Arc::new(Self {
            stdin: Mutex::new(Some(stdin)),
            pending,
            dead,
            pid,
            venvs,
            next: AtomicU64::new(0),
            free: Mutex::new(Vec::new()),
        }))
    }

    /// `true` while the supervisor runs and its mounts match `venvs`.
    pub(crate) fn usable(&self, venvs: &[(PathBuf, u64)]) -> bool {
        !self.dead.load(Ordering::Acquire) && self.venvs == venvs
    }

    fn send(&self, line: &str) -> bool {
        self.send_bytes(line.as_bytes())
    }

    fn send_bytes(&self, bytes: &[u8]) -> bool {
        let mut guard = lock(&self.stdin);
        match guard.as_mut() {
            Some(stdin) => stdin.write_all(bytes).is_ok(),
            None => false,
        }
    }

    /// Lets the supervisor exit once its running commands are done.
    pub(crate) fn retire(&self) {
        lock(&self.stdin).take();
    }

    /// Kills the supervisor and everything inside it.
    pub(crate) fn kill(&self) {
        lock(&self.stdin).take();
        if !self.dead.load(Ordering::Acquire) {
            crate::kill::kill_pid(self.pid);
        }
    }

    /// Runs a command inside the sandbox: `program args` in `cwd` with
    /// exactly `env`, `stdin` fed from a file, output captured up to `cap`,
    /// everything killed at `timeout`. `run_dir` (host path, inside the
    /// workspace) holds the request, the stdin file and the FIFOs.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn run(
        &self,
        run_dir: &Path,
        cwd: &Path,
        program: &Path,
        args: &[OsString],
        env: &BTreeMap<String, String>,
        stdin: Option<&str>,
        timeout: Duration,
        cap: usize,
    ) -> WorkspaceResult<Outcome> {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let slot = lock(&self.free).pop().unwrap_or(id);
        let ctl = Control::new(run_dir);
        let (request, out, err) = ctl.prepare(cwd, program, args, env, stdin)?;
        let (tx, mut rx) = mpsc::unbounded_channel();
        lock(&self.pending).insert(id, tx);
        let mut guard = RunGuard {
            sup: self,
            id,
            slot,
            done: false,
        };
        let started = Instant::now();
        let mut message = format!("r {id} {slot} {}\n", request.len()).into_bytes();
        message.extend_from_slice(&request);
        if !self.send_bytes(&message) {
            return Err(gone());
        }
        match rx.recv().await {
            Some(Msg::Started) => {}
            Some(Msg::Failed) => {
                return Err(WorkspaceError::new(
                    WorkspaceErrorKind::Spawn,
                    "the sandbox could not start the command",
                ));
            }
            Some(Msg::Exited(_)) | None => return Err(gone()),
        }
        let out = tokio::spawn(read_capped(out, cap));
        let err = tokio::spawn(read_capped(err, cap));
        let (exit_code, timed_out) = match tokio::time::timeout(timeout, rx.recv()).await {
            Ok(Some(Msg::Exited(code))) => (Some(code), false),
            Ok(_) => (None, false),
            Err(_) => (None, true),
        };
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        guard.done = !timed_out && exit_code.is_some();
        drop(guard);
        let readers = async { (out.await.ok(), err.await.ok()) };
        // Everything holding the FIFOs lives in the command's PID namespace,
        // gone once it exited or was killed.
        let (o, e) = tokio::time::timeout(Duration::from_secs(2), readers)
            .await
            .unwrap_or_default();
        let (stdout, stdout_cut) = o.map(|c| c.into_text()).unwrap_or_default();
        let (stderr, stderr_cut) = e.map(|c| c.into_text()).unwrap_or_default();
        Ok(Outcome {
            stdout,
            stderr,
            stdout_cut,
            stderr_cut,
            exit_code,
            timed_out,
            duration_ms,
        })
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        self.kill();
    }
}

fn gone() -> WorkspaceError {
    WorkspaceError::new(WorkspaceErrorKind::Spawn, "the sandbox supervisor stopped")
}

/// Gives a run's slot back when the run finished, else kills the slot and
/// everything in it (timeout, failure, or the run's future was dropped).
struct RunGuard<'a> {
    sup: &'a Supervisor,
    id: u64,
    slot: u64,
    done: bool,
}

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        lock(&self.sup.pending).remove(&self.id);
        if self.done {
            lock(&self.sup.free).push(self.slot);
        } else {
            self.sup.send(&format!("k {} {}\n", self.id, self.slot));
        }
    }
}

/// The control files of one run, removed when dropped.
struct Control {
    stdin: PathBuf,
    stdout: PathBuf,
    stderr: PathBuf,
}

impl Control {
    fn new(run_dir: &Path) -> Self {
        Self {
            stdin: run_dir.join(".stdin"),
            stdout: run_dir.join(".stdout"),
            stderr: run_dir.join(".stderr"),
        }
    }

    fn prepare(
        &self,
        cwd: &Path,
        program: &Path,
        args: &[OsString],
        env: &BTreeMap<String, String>,
        stdin: Option<&str>,
    ) -> WorkspaceResult<(
        Vec<u8>,
        tokio::net::unix::pipe::Receiver,
        tokio::net::unix::pipe::Receiver,
    )> {
        use std::os::unix::ffi::OsStrExt;
        let nul = |b: &[u8]| b.contains(&0);
        if nul(program.as_os_str().as_bytes()) || args.iter().any(|a| nul(a.as_bytes())) {
            return Err(WorkspaceError::new(
                WorkspaceErrorKind::InvalidRequest,
                "the command holds a NUL byte",
            ));
        }
        let mut req: Vec<u8> = Vec::with_capacity(2048);
        let mut field = |b: &[u8]| {
            req.extend_from_slice(b);
            req.push(0);
        };
        field(cwd.as_os_str().as_bytes());
        match stdin {
            Some(text) => {
                std::fs::write(&self.stdin, text).map_err(|e| io_error("standard input", e))?;
                field(self.stdin.as_os_str().as_bytes());
            }
            None => field(b""),
        }
        field(self.stdout.as_os_str().as_bytes());
        field(self.stderr.as_os_str().as_bytes());
        field(env.len().to_string().as_bytes());
        for (k, v) in env {
            field(format!("{k}={v}").as_bytes());
        }
        field(program.as_os_str().as_bytes());
        for a in args {
            field(a.as_bytes());
        }
        let open = |path: &Path| {
            rustix::fs::mknodat(
                rustix::fs::CWD,
                path,
                rustix::fs::FileType::Fifo,
                rustix::fs::Mode::from_raw_mode(0o600),
                0,
            )
            .map_err(|e| io_error("output FIFO", e.into()))?;
            tokio::net::unix::pipe::OpenOptions::new()
                .open_receiver(path)
                .map_err(|e| io_error("output FIFO", e))
        };
        let (out, err) = (open(&self.stdout)?, open(&self.stderr)?);
        Ok((req, out, err))
    }
}

impl Drop for Control {
    fn drop(&mut self) {
        for p in [&self.stdin, &self.stdout, &self.stderr] {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// The supervisor's thread: spawns `bwrap`, hands back its stdin, then
/// routes its replies until it exits.
fn supervise(
    program: &Path,
    args: &[OsString],
    pending: &Pending,
    dead: &AtomicBool,
    tx: &std::sync::mpsc::Sender<std::io::Result<(std::process::ChildStdin, u32)>>,
) {
    let spawned = std::process::Command::new(program)
        .args(args)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            dead.store(true, Ordering::Release);
            let _ = tx.send(Err(e));
            return;
        }
    };
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        dead.store(true, Ordering::Release);
        let _ = child.kill();
        let _ = child.wait();
        return;
    };
    if tx.send(Ok((stdin, child.id()))).is_err() {
        let _ = child.kill();
        let _ = child.wait();
        return;
    }
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { break };
        let mut parts = line.split(' ');
        let (Some(kind), Some(id)) = (parts.next(), parts.next().and_then(|s| s.parse().ok()))
        else {
            continue;
        };
        let msg = match kind {
            "s" => Msg::Started,
            "e" => Msg::Failed,
            "x" => Msg::Exited(parts.next().and_then(|s| s.parse().ok()).unwrap_or(-1)),
            _ => continue,
        };
        if let Some(sender) = lock(pending).get(&id) {
            let _ = sender.send(msg);
        }
    }
    dead.store(true, Ordering::Release);
    lock(pending).clear();
    let _ = child.wait();
}
