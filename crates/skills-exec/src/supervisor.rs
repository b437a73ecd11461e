//! One long-lived bubblewrap per workspace (F-EXE-8, run overhead).
//!
//! Creating bubblewrap's namespaces and mounts costs several times a plain
//! process start, so the sandbox runtime starts one `bwrap` per workspace,
//! with exactly the confinement a single run gets (see [`crate::sandbox`]),
//! running a small `perl` supervisor (`SCRIPT`). Each command runs in a
//! *slot*: user, PID, mount and IPC namespaces of its own nested in the
//! sandbox's, with its own tmpfs on `/tmp` and `/dev/shm` (and its own
//! `/proc` where the kernel allows it), reused by the session's later runs
//! once emptied (every process killed, `/tmp`, `/dev/shm` and System V IPC
//! cleared); so a command and everything it forked (background, `setsid`,
//! double fork) are gone when the command exits or the run is killed, as
//! with a `bwrap` per run, and nothing it left in `/tmp` reaches the next
//! run. (A mount namespace made per run would cost about 2 ms a run.)
//! Standard output and error come
//! back through FIFOs in the run folder; standard input is a file written
//! there beforehand (or `/dev/null`). The host makes and opens these by
//! handle, never through a path a command could redirect.
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
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use skills_core::{WorkspaceError, WorkspaceErrorKind, WorkspaceResult};
use tokio::sync::mpsc;

use crate::capture::read_capped;
use crate::engine::{Outcome, lock};
use crate::fsutil::{DirHandle, io_error};
use crate::sandbox::Sandbox;

/// The supervisor, run by `perl` inside `bwrap` (`perl` is part of every
/// Debian and Ubuntu system; without it each run starts its own `bwrap`).
/// `$ARGV[0..3]` are the numbers of the `unshare`, `prctl` and `mount`
/// system calls. It makes itself non-dumpable, so no command can read or
/// write its memory or open its descriptors through `/proc`, and closes
/// every descriptor it inherited beyond standard input, output and error.
///
/// Requests on standard input: `r ID SLOT LEN` then LEN bytes of
/// NUL-terminated fields (cwd, stdin file or empty, stdout FIFO, stderr FIFO,
/// the number N of variables, N `NAME=VALUE`, the program and its
/// arguments), or `k ID SLOT` (kill). Replies: `s ID` (started), `x ID CODE`
/// (exited, everything it started gone), `e ID` (could not start).
///
/// A slot is a child in a process group of its own that entered new user,
/// PID, mount and IPC namespaces, mapped the sandbox's user to itself (it is
/// dumpable only while it writes its own maps: a non-dumpable process's
/// `/proc` files belong to root, so a normal user could not write them), and
/// forked that PID namespace's PID 1: a minimal init with
/// `PR_SET_PDEATHSIG` = `SIGKILL` that mounts a tmpfs on `/tmp` (binding
/// back the sandbox's mounts below `/tmp`, such as a workspace there) and
/// on `/dev/shm`, tries a new `/proc` (the kernel refuses it when bubblewrap
/// covered parts of the sandbox's, as it does for root), then takes one
/// request at a time: it forks the command's process, which restores
/// `SIGPIPE`, opens the FIFOs and `exec`s the command (PID 2); it reaps
/// until the command exits, kills and reaps everything left in its
/// namespace (`kill(-1)` from PID 1), empties `/tmp` (never crossing into
/// the bound mounts) and `/dev/shm`, removes System V IPC objects, and only
/// then reports the exit, so the next run in that slot starts clean. The
/// host hands each slot to one run at a time; a run that is killed (its
/// slot's group gets `SIGKILL`) takes its slot with it: the init dies with
/// its parent, and the namespaces with it.
const SCRIPT: &str = r#"use strict; use POSIX (); use File::Path ();
my ($UNSHARE, $PRCTL, $MOUNT) = map { $_ + 0 } @ARGV;
syscall($PRCTL, 4, 0, 0, 0, 0);
if (opendir(my $d, '/proc/self/fd')) { my @fds = grep { /^\d+$/ && $_ > 2 } readdir $d; closedir $d; POSIX::close($_) for @fds; }
$SIG{CHLD} = 'IGNORE'; $SIG{PIPE} = 'IGNORE';
open(my $reply, '>&', \*STDOUT) or die; $reply->autoflush(1);
open(STDOUT, '>', '/dev/null'); open(STDERR, '>', '/dev/null');
binmode STDIN;
my %slots;
while (my $line = <STDIN>) {
  chomp $line;
  my ($op, $id, $slot, $len) = split / /, $line;
  next unless defined $slot;
  if ($op eq 'r') {
    my $buf = '';
    while (length($buf) < ($len // 0)) { read(STDIN, $buf, $len - length($buf), length($buf)) or last; }
    my $s = $slots{$slot} ||= slot();
    unless ($s && print { $s->[1] } "$id $len\n$buf") { print $reply "e $id\n"; }
  } elsif ($op eq 'k') {
    my $s = delete $slots{$slot};
    if ($s) { kill('KILL', -$s->[0], $s->[0]); close $s->[1]; }
  }
}
kill('KILL', -$_->[0], $_->[0]) for values %slots;
1 while wait() != -1;
sub slot {
  pipe(my $r, my $w) or return undef;
  my $pid = fork;
  return undef unless defined $pid;
  if ($pid == 0) {
    close $w; open(STDIN, '<', '/dev/null');
    $SIG{CHLD} = 'DEFAULT';
    setpgrp(0, 0);
    my ($uid, $gid) = ($>, $) + 0);
    POSIX::_exit(1) unless syscall($UNSHARE, 0x10000000 | 0x20000000 | 0x20000 | 0x08000000) == 0;
    syscall($PRCTL, 4, 1, 0, 0, 0);
    for (['setgroups', 'deny'], ['uid_map', "$uid $uid 1"], ['gid_map', "$gid $gid 1"]) {
      my $fh; open($fh, '>', "/proc/self/$_->[0]") && print($fh $_->[1]) && close($fh) or POSIX::_exit(1);
    }
    syscall($PRCTL, 4, 0, 0, 0, 0);
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
  syscall($PRCTL, 1, 9, 0, 0, 0);
  binmode $r;
  my @keep;
  if (open(my $mi, '<', '/proc/self/mountinfo')) {
    for my $m (sort map { my $p = (split / /)[4]; $p =~ s/\\([0-7]{3})/chr(oct($1))/ge; $p } <$mi>) {
      push @keep, $m if index($m, '/tmp/') == 0 && !grep { index("$m/", "$_/") == 0 } @keep;
    }
  }
  my ($tmpfs, $shm, $mode, $proc) = ('tmpfs', '/dev/shm', 'mode=1777', 'proc');
  my $procdir = '/proc';
  POSIX::_exit(1) unless fresh_tmp(\@keep) && (!-d $shm || syscall($MOUNT, $tmpfs, $shm, $tmpfs, 6, $mode) == 0);
  syscall($MOUNT, $proc, $procdir, $proc, 14, 0);
  while (my $hdr = <$r>) {
    my ($id, $len) = split / /, $hdr;
    my $data = '';
    while (length($data) < $len) { read($r, $data, $len - length($data), length($data)) or POSIX::_exit(0); }
    my ($cwd, $in, $out, $err, $n, @rest) = split /\0/, $data, -1; pop @rest;
    my $c = fork;
    if (defined $c && $c == 0) {
      close $r;
      $SIG{PIPE} = 'DEFAULT';
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
    wipe('/tmp', \@keep); wipe($shm, []);
    for my $k (['msg', sub { msgctl($_[0], 0, 0) }], ['sem', sub { semctl($_[0], 0, 0, 0) }], ['shm', sub { shmctl($_[0], 0, 0) }]) {
      open(my $f, '<', "/proc/sysvipc/$k->[0]") or next;
      my @lines = <$f>; shift @lines;
      $k->[1]->((split ' ', $_)[1]) for @lines;
    }
    my $code = ($st & 127) ? 128 + ($st & 127) : $st >> 8;
    print $reply "x $id $code\n";
  }
  POSIX::_exit(0);
}
sub fresh_tmp {
  my ($tmpfs, $tmp, $mode) = ('tmpfs', '/tmp', 'mode=1777');
  my @dirs;
  for (@{$_[0]}) { my $d; opendir($d, $_) or return 0; push @dirs, $d; }
  return 0 unless syscall($MOUNT, $tmpfs, $tmp, $tmpfs, 6, $mode) == 0;
  for my $i (0 .. $#dirs) {
    my ($to, $from) = ($_[0][$i], '/proc/self/fd/' . fileno($dirs[$i]));
    File::Path::make_path($to);
    return 0 unless syscall($MOUNT, $from, $to, 0, 0x5000, 0) == 0;
  }
  closedir $_ for @dirs;
  1;
}
sub wipe {
  my ($dir, $keep) = @_;
  opendir(my $d, $dir) or return;
  for my $name (grep { $_ ne '.' && $_ ne '..' } readdir $d) {
    my $p = "$dir/$name";
    next if grep { $_ eq $p } @$keep;
    if (!-l $p && grep { index($_, "$p/") == 0 } @$keep) { wipe($p, $keep); next; }
    File::Path::remove_tree($p);
  }
  closedir $d;
}
"#;

/// Where `perl` is looked for inside the sandbox (the system folders are the
/// host's, read-only).
const PERL_PATHS: [&str; 2] = ["/usr/bin/perl", "/bin/perl"];

/// The numbers of the `unshare`, `prctl` and `mount` system calls here.
#[cfg(target_arch = "x86_64")]
const SYSCALLS: Option<[u32; 3]> = Some([272, 157, 165]);
#[cfg(target_arch = "aarch64")]
const SYSCALLS: Option<[u32; 3]> = Some([97, 167, 40]);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const SYSCALLS: Option<[u32; 3]> = None;

/// Most idle slots a supervisor keeps (two processes each); a slot freed
/// beyond that is killed, so a burst of parallel runs does not leave its
/// slots behind until cleanup.
const MAX_IDLE_SLOTS: usize = 4;

/// Longest reply line the supervisor sends (`x ID CODE`); anything longer
/// is a broken channel.
const MAX_REPLY: u64 = 128;

/// `perl` at a fixed system path with the system call numbers, when runs
/// can use a long-lived sandbox on this machine.
pub(crate) fn helpers() -> Option<Helpers> {
    let syscalls = SYSCALLS?;
    let perl = PERL_PATHS.iter().map(PathBuf::from).find(|p| p.is_file())?;
    Some(Helpers { perl, syscalls })
}

/// What the supervisor needs.
#[derive(Debug, Clone)]
pub(crate) struct Helpers {
    pub(crate) perl: PathBuf,
    syscalls: [u32; 3],
}

impl Helpers {
    /// `perl -e SCRIPT UNSHARE PRCTL MOUNT`.
    fn supervisor_args(&self) -> Vec<String> {
        let mut a = vec!["-e".to_owned(), SCRIPT.to_owned()];
        a.extend(self.syscalls.iter().map(u32::to_string));
        a
    }
}

/// Checks, once, that the supervisor works here end to end: starts it in a
/// sandbox with no workspace, runs `/bin/sh -c 'exit 0'` in a slot (nested
/// user and PID namespaces, a private `/tmp`), and expects it to start and
/// exit with 0. Blocking.
pub(crate) fn probe(sandbox: &Sandbox, helpers: &Helpers) -> bool {
    let mut args = sandbox.supervisor_base();
    args.push("--".into());
    args.push(helpers.perl.clone().into_os_string());
    args.extend(helpers.supervisor_args().into_iter().map(OsString::from));
    let request = encode(
        Path::new("/"),
        None,
        Path::new("/dev/null"),
        Path::new("/dev/null"),
        Path::new("/bin/sh"),
        &["-c".into(), "exit 0".into()],
        &BTreeMap::new(),
    );
    let Ok(request) = request else { return false };
    let Ok(mut child) = std::process::Command::new(sandbox.program())
        .args(&args)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    else {
        return false;
    };
    // Input stays open until the command's exit is in (at the end of its
    // input the supervisor kills every slot).
    let stdin = child.stdin.take().and_then(|mut stdin| {
        let mut message = format!("r 0 0 {}\n", request.len()).into_bytes();
        message.extend_from_slice(&request);
        stdin.write_all(&message).ok().map(|()| stdin)
    });
    let mut out = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        let mut reader = BufReader::new(stdout.take(4096));
        for _ in 0..2 {
            if reader.read_until(b'\n', &mut out).unwrap_or(0) == 0 {
                break;
            }
        }
    }
    // Not killed: a `bwrap` killed while it sets up leaves its child
    // waiting forever; at the end of its input the supervisor exits.
    drop(stdin);
    let _ = child.wait();
    out == b"s 0\nx 0 0\n"
}

/// The request fields, NUL-terminated (see `SCRIPT`).
fn encode(
    cwd: &Path,
    stdin: Option<&Path>,
    stdout: &Path,
    stderr: &Path,
    program: &Path,
    args: &[OsString],
    env: &BTreeMap<String, String>,
) -> WorkspaceResult<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
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
    let mut req: Vec<u8> = Vec::with_capacity(2048);
    let mut field = |b: &[u8]| {
        req.extend_from_slice(b);
        req.push(0);
    };
    field(cwd.as_os_str().as_bytes());
    field(stdin.map_or(&b""[..], |p| p.as_os_str().as_bytes()));
    field(stdout.as_os_str().as_bytes());
    field(stderr.as_os_str().as_bytes());
    field(env.len().to_string().as_bytes());
    for (k, v) in env {
        field(format!("{k}={v}").as_bytes());
    }
    field(program.as_os_str().as_bytes());
    for a in args {
        field(a.as_bytes());
    }
    Ok(req)
}

#[derive(Debug)]
enum Msg {
    Started,
    Exited(i32),
    Failed,
}

type Pending = Arc<Mutex<HashMap<u64, mpsc::UnboundedSender<Msg>>>>;

/// What the supervisor's thread hands back once `bwrap` runs.
type Spawned = std::process::ChildStdin;

/// A running supervisor.
#[derive(Debug)]
pub(crate) struct Supervisor {
    stdin: Mutex<Option<std::process::ChildStdin>>,
    pending: Pending,
    dead: Arc<AtomicBool>,
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
                out.push((venv, std::os::unix::fs::MetadataExt::ino(&m)));
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
        let args = sandbox.args_from(
            sandbox.supervisor_base(),
            ws_root,
            ws_root,
            &helpers.perl,
            &helpers.supervisor_args(),
        )?;
        let program = sandbox.program().to_path_buf();
        let pending: Pending = Arc::default();
        let dead = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel();
        let (p, d) = (Arc::clone(&pending), Arc::clone(&dead));
        std::thread::Builder::new()
            .name("skills-sandbox".into())
            .spawn(move || supervise(&program, &args, &p, &d, &tx))
            .map_err(|e| io_error("starting the sandbox thread", e))?;
        let stdin = rx
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
            venvs,
            next: AtomicU64::new(0),
            free: Mutex::new(Vec::new()),
        }))
    }

    /// `true` while the supervisor runs and its mounts match `venvs`.
    pub(crate) fn usable(&self, venvs: &[(PathBuf, u64)]) -> bool {
        !self.dead.load(Ordering::Acquire) && self.venvs == venvs
    }

    fn send(&self, bytes: &[u8]) -> bool {
        let mut guard = lock(&self.stdin);
        match guard.as_mut() {
            Some(stdin) => stdin.write_all(bytes).is_ok(),
            None => false,
        }
    }

    /// Kills the supervisor and everything inside it: at the end of its
    /// input the supervisor kills every slot and exits, and `bwrap` with it.
    /// (Killing `bwrap` from outside would not do: when the runtime runs as
    /// root, its sandbox outlives it, and one killed while it sets the
    /// sandbox up leaves its child waiting forever.)
    pub(crate) fn kill(&self) {
        lock(&self.stdin).take();
    }

    /// Runs a command inside the sandbox: `program args` in `cwd` with
    /// exactly `env`, `stdin` fed from a file, output captured up to `cap`,
    /// everything killed at `timeout` (counted from the request, so a
    /// command that never starts times out too). `run_dir` (relative to the
    /// workspace `ws_root`) holds the stdin file and the FIFOs. `None` when
    /// the supervisor was gone before the command started (it is marked
    /// dead, so the next call starts a new one).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn run(
        &self,
        ws_root: &Path,
        run_dir: &str,
        cwd: &Path,
        program: &Path,
        args: &[OsString],
        env: &BTreeMap<String, String>,
        stdin: Option<&str>,
        timeout: Duration,
        cap: usize,
    ) -> WorkspaceResult<Option<Outcome>> {
        let deadline = tokio::time::Instant::now() + timeout;
        let started = Instant::now();
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut ctl = Control::new(ws_root, run_dir)?;
        let (request, out, err) = ctl.prepare(cwd, program, args, env, stdin)?;
        let (tx, mut rx) = mpsc::unbounded_channel();
        lock(&self.pending).insert(id, tx);
        let slot = lock(&self.free).pop().unwrap_or(id);
        let mut guard = RunGuard {
            sup: self,
            id,
            slot,
            done: false,
        };
        let mut message = format!("r {id} {slot} {}\n", request.len()).into_bytes();
        message.extend_from_slice(&request);
        if !self.send(&message) {
            self.dead.store(true, Ordering::Release);
            return Ok(None);
        }
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(Msg::Started)) => {}
            Ok(Some(Msg::Failed)) => {
                return Err(WorkspaceError::new(
                    WorkspaceErrorKind::Spawn,
                    "the sandbox could not start the command",
                ));
            }
            Ok(Some(Msg::Exited(_)) | None) => {
                self.dead.store(true, Ordering::Release);
                return Ok(None);
            }
            // Never started (its files were swapped for something that
            // blocks): killed with its slot like any timed-out run.
            Err(_) => {
                drop(guard);
                return Ok(Some(Outcome::new(None, None, None, true, millis(started))));
            }
        }
        let out = tokio::spawn(read_capped(out, cap));
        let err = tokio::spawn(read_capped(err, cap));
        let (exit_code, timed_out) = match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(Msg::Exited(code))) => (Some(code), false),
            Ok(_) => {
                out.abort();
                err.abort();
                return Err(gone());
            }
            Err(_) => (None, true),
        };
        let duration_ms = millis(started);
        guard.done = !timed_out;
        drop(guard);
        let readers = async { (out.await.ok(), err.await.ok()) };
        // Everything the run started is gone now, so the FIFOs end; only
        // another run of the session holding one open could keep it going.
        let (o, e) = tokio::time::timeout(Duration::from_secs(2), readers)
            .await
            .unwrap_or_default();
        Ok(Some(Outcome::new(o, e, exit_code, timed_out, duration_ms)))
    }
}

fn millis(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        self.kill();
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
    slot: u64,
    done: bool,
}

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        lock(&self.sup.pending).remove(&self.id);
        let kept = self.done && {
            let mut free = lock(&self.sup.free);
            let keep = free.len() < MAX_IDLE_SLOTS;
            if keep {
                free.push(self.slot);
            }
            keep
        };
        if !kept {
            self.sup
                .send(format!("k {} {}\n", self.id, self.slot).as_bytes());
        }
    }
}

/// The control files of one run, made and removed through a handle on the
/// run folder.
struct Control {
    dir: DirHandle,
    path: PathBuf,
    made: Vec<&'static str>,
}

impl Control {
    fn new(ws_root: &Path, run_dir: &str) -> WorkspaceResult<Self> {
        let dir = DirHandle::open(ws_root, run_dir).map_err(|e| io_error("run folder", e))?;
        Ok(Self {
            dir,
            path: ws_root.join(run_dir),
            made: Vec::new(),
        })
    }

    fn prepare(
        &mut self,
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
        let stdin_path = match stdin {
            Some(text) => {
                self.made.push(".stdin");
                self.dir
                    .write_new(".stdin", text.as_bytes(), 0o600)
                    .map_err(|e| io_error("standard input", e))?;
                Some(self.path.join(".stdin"))
            }
            None => None,
        };
        let (out_path, err_path) = (self.path.join(".stdout"), self.path.join(".stderr"));
        let request = encode(
            cwd,
            stdin_path.as_deref(),
            &out_path,
            &err_path,
            program,
            args,
            env,
        )?;
        let mut open = |name: &'static str| {
            self.made.push(name);
            self.dir
                .fifo_reader(name)
                .and_then(tokio::net::unix::pipe::Receiver::from_owned_fd)
                .map_err(|e| io_error("output FIFO", e))
        };
        let out = open(".stdout")?;
        let err = open(".stderr")?;
        Ok((request, out, err))
    }
}

impl Drop for Control {
    fn drop(&mut self) {
        for name in &self.made {
            self.dir.remove(name);
        }
    }
}

/// The supervisor's thread: spawns `bwrap`, hands back its stdin, then
/// routes its replies until it exits (or breaks the protocol: it is then
/// marked dead and no longer used).
fn supervise(
    program: &Path,
    args: &[OsString],
    pending: &Pending,
    dead: &AtomicBool,
    tx: &std::sync::mpsc::Sender<std::io::Result<Spawned>>,
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
    if tx.send(Ok(stdin)).is_err() {
        // Its input is closed with the unsent message: it exits.
        let _ = child.wait();
        return;
    }
    let mut reader = BufReader::new(stdout);
    let mut line = Vec::with_capacity(64);
    loop {
        line.clear();
        match (&mut reader).take(MAX_REPLY).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) if line.last() != Some(&b'\n') => break,
            Ok(_) => {}
        }
        let Some((id, msg)) = parse_reply(&line) else {
            break;
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

/// `s ID`, `e ID` or `x ID CODE`.
fn parse_reply(line: &[u8]) -> Option<(u64, Msg)> {
    let text = std::str::from_utf8(line).ok()?.strip_suffix('\n')?;
    let mut parts = text.split(' ');
    let kind = parts.next()?;
    let id = parts.next()?.parse().ok()?;
    let msg = match (kind, parts.next()) {
        ("s", None) => Msg::Started,
        ("e", None) => Msg::Failed,
        ("x", Some(code)) => Msg::Exited(code.parse().ok()?),
        _ => return None,
    };
    parts.next().is_none().then_some((id, msg))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn replies() {
        assert!(matches!(parse_reply(b"s 3\n"), Some((3, Msg::Started))));
        assert!(matches!(
            parse_reply(b"x 4 137\n"),
            Some((4, Msg::Exited(137)))
        ));
        assert!(matches!(parse_reply(b"e 5\n"), Some((5, Msg::Failed))));
        for bad in [
            &b"x 4\n"[..],
            b"s 3",
            b"s 3 4\n",
            b"q 1\n",
            b"x a 1\n",
            b"\xff\n",
        ] {
            assert!(parse_reply(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn the_script_compiles() {
        let perl = helpers().map(|h| h.perl).unwrap_or_else(|| {
            panic!("needs perl at /usr/bin/perl (apt-get install perl-base) on x86-64 or aarch64")
        });
        let out = std::process::Command::new(perl)
            .args(["-c", "-e", SCRIPT])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    #[test]
    fn requests_refuse_nul_bytes() {
        let p = Path::new("/");
        let mut env = BTreeMap::new();
        assert!(encode(p, None, p, p, p, &["a\0b".into()], &env).is_err());
        env.insert("A".to_owned(), "x\0y".to_owned());
        assert!(encode(p, None, p, p, p, &[], &env).is_err());
    }
}
