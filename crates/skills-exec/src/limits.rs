//! Per-run resource limits (threat model: a run must not exhaust the host):
//! processes and memory through cgroups where the host lets the runtime
//! make them, resource limits (`setrlimit`) where it does not, sized
//! temporary file systems in the sandbox.
//!
//! **cgroups.** At build the runtime looks for the `pids` and `memory`
//! controllers: cgroup v1 hierarchies (hybrid hosts mount them beside an
//! empty v2 one) or cgroup v2, and checks that it can create a cgroup
//! below its own. Each run (each slot of the shared sandbox, which runs one
//! command at a time) then gets a cgroup of its own with `pids.max` and the
//! memory limit (swap included), and its command joins it before it starts
//! (the helper writes to `cgroup.procs` between `fork` and `exec`, through
//! a descriptor the runtime opened). Counters read before and after a run
//! tell whether it hit a limit: its result then carries a warning.
//! Idle cgroups are kept for the next run, removed when the runtime goes.
//!
//! **Fallback.** A controller that cannot be used is replaced by a
//! resource limit on every process of the run: `RLIMIT_NPROC` for
//! processes (counted per user namespace, so per run in the sandbox; in
//! the local runtime it would count all the user's processes, so it is not
//! used there) and `RLIMIT_DATA` for memory (per process). The runtime
//! logs once what is not enforced, and a failed run's result says so.
//!
//! Every run also gets `RLIMIT_FSIZE` (largest file) and `RLIMIT_CORE` 0.

use std::fmt::Write as _;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use skills_sandbox::protocol::{Rlimit, RlimitResource};

use crate::engine::lock;

/// Default most processes (and threads) a run may have at once.
pub const DEFAULT_MAX_PROCESSES: u64 = 512;
/// Default most memory a run may use (2 GiB; its `/tmp` counts too).
pub const DEFAULT_MAX_MEMORY: u64 = 2 << 30;
/// Default largest file a run may write (1 GiB).
pub const DEFAULT_MAX_FILE_SIZE: u64 = 1 << 30;
/// Default size of a sandboxed run's `/tmp` (512 MiB).
pub const DEFAULT_TMP_SIZE: u64 = 512 << 20;
/// Default size of a sandboxed run's `/dev/shm` (64 MiB).
pub const DEFAULT_SHM_SIZE: u64 = 64 << 20;

/// Idle cgroups kept for later runs (per runtime).
const MAX_IDLE_CGROUPS: usize = 8;

/// The limits of each run (see the module docs for how each is enforced).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunLimits {
    /// Most processes at once (`None`: unbounded).
    pub max_processes: Option<u64>,
    /// Most memory in bytes (`None`: unbounded).
    pub max_memory: Option<u64>,
    /// Largest file a process may write, in bytes (`None`: unbounded).
    pub max_file_size: Option<u64>,
    /// Size of the sandbox's `/tmp` in bytes (0: the kernel's default,
    /// half the RAM).
    pub tmp_size: u64,
    /// Size of the sandbox's `/dev/shm` in bytes (0: the kernel's default).
    pub shm_size: u64,
}

impl Default for RunLimits {
    fn default() -> Self {
        Self {
            max_processes: Some(DEFAULT_MAX_PROCESSES),
            max_memory: Some(DEFAULT_MAX_MEMORY),
            max_file_size: Some(DEFAULT_MAX_FILE_SIZE),
            tmp_size: DEFAULT_TMP_SIZE,
            shm_size: DEFAULT_SHM_SIZE,
        }
    }
}

impl RunLimits {
    /// The defaults ([`DEFAULT_MAX_PROCESSES`] and the other constants).
    pub fn new() -> Self {
        Self::default()
    }

    /// No limit at all (the kernel's defaults for the temporary folders).
    pub fn unlimited() -> Self {
        Self {
            max_processes: None,
            max_memory: None,
            max_file_size: None,
            tmp_size: 0,
            shm_size: 0,
        }
    }

    /// Sets the most processes at once.
    #[must_use]
    pub fn max_processes(mut self, n: Option<u64>) -> Self {
        self.max_processes = n;
        self
    }

    /// Sets the most memory, in bytes.
    #[must_use]
    pub fn max_memory(mut self, bytes: Option<u64>) -> Self {
        self.max_memory = bytes;
        self
    }

    /// Sets the largest file a process may write, in bytes.
    #[must_use]
    pub fn max_file_size(mut self, bytes: Option<u64>) -> Self {
        self.max_file_size = bytes;
        self
    }

    /// Sets the size of the sandbox's `/tmp`, in bytes.
    #[must_use]
    pub fn tmp_size(mut self, bytes: u64) -> Self {
        self.tmp_size = bytes;
        self
    }

    /// Sets the size of the sandbox's `/dev/shm`, in bytes.
    #[must_use]
    pub fn shm_size(mut self, bytes: u64) -> Self {
        self.shm_size = bytes;
        self
    }
}

/// How a runtime enforces its [`RunLimits`].
#[derive(Debug)]
pub(crate) struct Enforcement {
    pub(crate) limits: RunLimits,
    /// The runtime's cgroups, when any controller can be used.
    cgroups: Option<Arc<Cgroups>>,
    /// Limits set on every process of a run.
    pub(crate) rlimits: Vec<Rlimit>,
    /// What is not enforced, for warnings.
    pub(crate) missing: Vec<String>,
}

/// Which runtime the limits are for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Local,
    Sandbox,
}

impl Enforcement {
    /// Finds how to enforce `limits` here. Blocking (reads `/proc`, may
    /// create the runtime's cgroup folders).
    pub(crate) fn new(limits: RunLimits, kind: Kind) -> Self {
        let want_pids = limits.max_processes.is_some();
        let want_memory = limits.max_memory.is_some();
        let cgroups = if want_pids || want_memory {
            Cgroups::find(&limits)
        } else {
            None
        };
        let (has_pids, has_memory) = cgroups
            .as_ref()
            .map_or((false, false), |c| (c.pids.is_some(), c.memory.is_some()));
        let mut rlimits = vec![Rlimit {
            resource: RlimitResource::Core,
            value: 0,
        }];
        if let Some(n) = limits.max_file_size {
            rlimits.push(Rlimit {
                resource: RlimitResource::FileSize,
                value: n,
            });
        }
        let mut missing = Vec::new();
        if let Some(n) = limits.max_processes
            && !has_pids
        {
            if kind == Kind::Sandbox {
                rlimits.push(Rlimit {
                    resource: RlimitResource::Processes,
                    value: n,
                });
                missing.push(format!(
                    "processes are bounded by RLIMIT_NPROC ({n} per run), not by a cgroup"
                ));
            } else {
                missing.push(format!(
                    "processes are not bounded (no usable pids cgroup; the limit was {n})"
                ));
            }
        }
        if let Some(bytes) = limits.max_memory
            && !has_memory
        {
            rlimits.push(Rlimit {
                resource: RlimitResource::Data,
                value: bytes,
            });
            missing.push(format!(
                "memory is bounded per process by RLIMIT_DATA ({}), not for the whole run by a cgroup",
                human(bytes)
            ));
        }
        if !missing.is_empty() {
            tracing::warn!("run limits not fully enforced here: {}", missing.join("; "));
        }
        Self {
            limits,
            cgroups: cgroups.map(Arc::new),
            rlimits,
            missing,
        }
    }

    /// Limits a container engine enforces: nothing here does (no cgroup,
    /// no resource limit of this process).
    #[cfg(feature = "container")]
    pub(crate) fn by_engine(limits: RunLimits) -> Self {
        Self {
            limits,
            cgroups: None,
            rlimits: Vec::new(),
            missing: Vec::new(),
        }
    }

    /// `true` when runs get cgroups.
    pub(crate) fn has_cgroups(&self) -> bool {
        self.cgroups.is_some()
    }

    /// An idle cgroup for a run (or a slot), when there is one: no file is
    /// touched.
    pub(crate) fn idle_cgroup(&self) -> Option<RunCgroup> {
        let c = self.cgroups.as_ref()?;
        let dirs = lock(&c.idle).pop()?;
        Some(RunCgroup {
            owner: Arc::clone(c),
            baseline: dirs.last,
            dirs: Some(dirs),
        })
    }

    /// A cgroup for a run (or a slot): an idle one, or a new one. Blocking
    /// (makes folders in cgroupfs).
    pub(crate) fn cgroup(&self) -> Option<std::io::Result<RunCgroup>> {
        if let Some(c) = self.idle_cgroup() {
            return Some(Ok(c));
        }
        self.cgroups.as_ref().map(|c| c.take())
    }

    /// The warning a failed run gets when some limit was only a resource
    /// limit (the run may have hit it without the runtime knowing).
    pub(crate) fn fallback_note(&self) -> Option<String> {
        (!self.missing.is_empty()).then(|| {
            format!(
                "the run failed; it may have hit a limit this host cannot report: {}",
                self.missing.join("; ")
            )
        })
    }
}

/// A cgroup for a run or a slot when the runtime has cgroups: an idle one
/// at once, or a new one made on the blocking pool.
pub(crate) async fn run_cgroup(
    enforcement: &Arc<Enforcement>,
) -> skills_workspace::WorkspaceResult<Option<RunCgroup>> {
    if let Some(c) = enforcement.idle_cgroup() {
        return Ok(Some(c));
    }
    if !enforcement.has_cgroups() {
        return Ok(None);
    }
    let e = Arc::clone(enforcement);
    match tokio::task::spawn_blocking(move || e.cgroup()).await {
        Ok(Some(Ok(c))) => Ok(Some(c)),
        Ok(Some(Err(e))) => Err(crate::fsutil::io_error("creating the run's cgroup", e)),
        _ => Ok(None),
    }
}

/// `1.5 GiB`-style sizes for messages.
pub(crate) fn human(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["bytes", "KiB", "MiB", "GiB"];
    let mut v = bytes;
    let mut unit = 0;
    while v >= 1024 && v.is_multiple_of(1024) && unit < UNITS.len() - 1 {
        v /= 1024;
        unit += 1;
    }
    format!("{v} {}", UNITS[unit])
}

/// The cgroup controllers the runtime can use, with the folder below which
/// it makes its cgroups.
#[derive(Debug)]
struct Cgroups {
    pids: Option<Controller>,
    memory: Option<Controller>,
    limits: RunLimits,
    idle: Mutex<Vec<CgroupDirs>>,
    next: AtomicU64,
}

/// One controller's folder for this runtime.
#[derive(Debug, Clone)]
struct Controller {
    /// `<mount>/<own cgroup>/skills-<pid>-<n>`, made by this runtime.
    dir: PathBuf,
    version: Version,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    V1,
    V2,
}

static RUNTIME_COUNTER: AtomicU64 = AtomicU64::new(0);

impl Cgroups {
    fn find(limits: &RunLimits) -> Option<Self> {
        let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
        let name = format!(
            "skills-{}-{}",
            std::process::id(),
            RUNTIME_COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let found = locate(&own, &mounts);
        let make = |place: Option<(PathBuf, Version)>, want: bool| -> Option<Controller> {
            let (base, version) = place?;
            if !want {
                return None;
            }
            let dir = base.join(&name);
            match std::fs::create_dir(&dir) {
                Ok(()) => Some(Controller { dir, version }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    Some(Controller { dir, version })
                }
                Err(e) => {
                    tracing::debug!(dir = %dir.display(), "no cgroup here: {e}");
                    None
                }
            }
        };
        let pids = make(found.pids, limits.max_processes.is_some());
        // On v2 both controllers live in the same folder.
        let memory = make(found.memory, limits.max_memory.is_some());
        if pids.is_none() && memory.is_none() {
            return None;
        }
        Some(Self {
            pids,
            memory,
            limits: limits.clone(),
            idle: Mutex::new(Vec::new()),
            next: AtomicU64::new(0),
        })
    }

    /// A new cgroup.
    fn take(self: &Arc<Self>) -> std::io::Result<RunCgroup> {
        let mut dirs = self.make()?;
        let baseline = dirs.counts();
        dirs.last = baseline;
        Ok(RunCgroup {
            owner: Arc::clone(self),
            dirs: Some(dirs),
            baseline,
        })
    }

    /// Makes the folders of a new cgroup, with the limits written.
    fn make(&self) -> std::io::Result<CgroupDirs> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let mut out = CgroupDirs::default();
        let result = (|| {
            for (c, kind) in [
                (&self.pids, CounterKind::Pids),
                (&self.memory, CounterKind::Memory),
            ] {
                let Some(c) = c else { continue };
                let dir = c.dir.join(n.to_string());
                if !out.dirs.contains(&dir) {
                    std::fs::create_dir(&dir)?;
                    out.dirs.push(dir.clone());
                    out.procs.push(open_procs(&dir)?);
                }
                match kind {
                    CounterKind::Pids => {
                        if let Some(max) = self.limits.max_processes {
                            write(&dir, "pids.max", &max.to_string())?;
                        }
                    }
                    CounterKind::Memory => {
                        if let Some(max) = self.limits.max_memory {
                            set_memory(&dir, c.version, max)?;
                        }
                    }
                }
                out.counters.push(Counter {
                    dir,
                    version: c.version,
                    kind,
                });
            }
            Ok(())
        })();
        match result {
            Ok(()) => Ok(out),
            Err(e) => {
                out.remove_now();
                Err(e)
            }
        }
    }
}

impl Drop for Cgroups {
    fn drop(&mut self) {
        for d in lock(&self.idle).drain(..) {
            d.remove_now();
        }
        for c in [&self.pids, &self.memory].into_iter().flatten() {
            let _ = std::fs::remove_dir(&c.dir);
        }
    }
}

fn open_procs(dir: &Path) -> std::io::Result<OwnedFd> {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("cgroup.procs"))?;
    Ok(OwnedFd::from(f))
}

fn write(dir: &Path, file: &str, value: &str) -> std::io::Result<()> {
    std::fs::write(dir.join(file), value)
}

/// The memory limit, swap included (a run over it is killed rather than
/// swapped out).
fn set_memory(dir: &Path, version: Version, max: u64) -> std::io::Result<()> {
    match version {
        Version::V1 => {
            write(dir, "memory.limit_in_bytes", &max.to_string())?;
            if dir.join("memory.memsw.limit_in_bytes").exists() {
                write(dir, "memory.memsw.limit_in_bytes", &max.to_string())?;
            }
        }
        Version::V2 => {
            write(dir, "memory.max", &max.to_string())?;
            if dir.join("memory.swap.max").exists() {
                write(dir, "memory.swap.max", "0")?;
            }
        }
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CounterKind {
    Pids,
    Memory,
}

#[derive(Debug)]
struct Counter {
    dir: PathBuf,
    version: Version,
    kind: CounterKind,
}

/// Limit hits counted by the kernel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Counts {
    /// Forks refused at `pids.max`.
    pids_max: u64,
    /// Processes killed by the out-of-memory killer.
    oom_kills: u64,
}

/// The folders of one cgroup (one per hierarchy).
#[derive(Debug, Default)]
struct CgroupDirs {
    dirs: Vec<PathBuf>,
    counters: Vec<Counter>,
    /// `cgroup.procs` of each folder, opened for writing.
    procs: Vec<OwnedFd>,
    /// The counters when it was last given back.
    last: Counts,
}

impl CgroupDirs {
    fn counts(&self) -> Counts {
        let mut c = Counts::default();
        for counter in &self.counters {
            match (counter.kind, counter.version) {
                (CounterKind::Pids, _) => {
                    c.pids_max = field(&counter.dir.join("pids.events"), "max");
                }
                (CounterKind::Memory, Version::V1) => {
                    c.oom_kills = field(&counter.dir.join("memory.oom_control"), "oom_kill");
                }
                (CounterKind::Memory, Version::V2) => {
                    c.oom_kills = field(&counter.dir.join("memory.events"), "oom_kill");
                }
            }
        }
        c
    }

    /// `true` when no process is left in it.
    fn is_empty(&self) -> bool {
        self.dirs.iter().all(|d| {
            std::fs::read_to_string(d.join("cgroup.procs")).is_ok_and(|s| s.trim().is_empty())
        })
    }

    fn remove_now(&self) {
        for d in self.dirs.iter().rev() {
            let _ = std::fs::remove_dir(d);
        }
    }
}

/// The cgroup of one run (or one slot).
#[derive(Debug)]
pub(crate) struct RunCgroup {
    /// Kept alive until this cgroup is gone, so the runtime's folders are
    /// removed last.
    owner: Arc<Cgroups>,
    dirs: Option<CgroupDirs>,
    baseline: Counts,
}

impl RunCgroup {
    /// Copies of the `cgroup.procs` descriptors, for the process that joins.
    pub(crate) fn procs(&self) -> std::io::Result<Vec<OwnedFd>> {
        self.dirs
            .iter()
            .flat_map(|d| d.procs.iter())
            .map(OwnedFd::try_clone)
            .collect()
    }

    /// Warnings for the limits hit since the cgroup was taken (or since
    /// the last call), as the run's result shows them.
    pub(crate) fn warnings(&mut self, limits: &RunLimits) -> Vec<String> {
        let now = self
            .dirs
            .as_ref()
            .map(CgroupDirs::counts)
            .unwrap_or_default();
        let mut out = Vec::new();
        if now.pids_max > self.baseline.pids_max {
            let mut w = String::from("the run reached its process limit");
            if let Some(n) = limits.max_processes {
                let _ = write!(w, " ({n} processes)");
            }
            w.push_str("; starting more processes failed");
            out.push(w);
        }
        if now.oom_kills > self.baseline.oom_kills {
            let mut w = String::from("the run reached its memory limit");
            if let Some(n) = limits.max_memory {
                let _ = write!(w, " ({})", human(n));
            }
            let _ = write!(
                w,
                "; the kernel killed {} of its processes",
                now.oom_kills - self.baseline.oom_kills
            );
            out.push(w);
        }
        self.baseline = now;
        out
    }

    /// Gives the cgroup back for a later run when nothing is left in it;
    /// otherwise removes it once its processes are gone.
    pub(crate) fn release(mut self) {
        if let Some(mut d) = self.dirs.take() {
            d.last = self.baseline;
            let mut idle = lock(&self.owner.idle);
            if idle.len() < MAX_IDLE_CGROUPS && d.is_empty() {
                idle.push(d);
                return;
            }
            drop(idle);
            self.dirs = Some(d);
        }
        self.remove_later();
    }

    /// Removes the folders once the processes in them are gone (they may
    /// still be dying): retried for a few seconds on a thread of its own.
    pub(crate) fn remove_later(mut self) {
        let Some(dirs) = self.dirs.take() else {
            return;
        };
        let owner = Arc::clone(&self.owner);
        let CgroupDirs { dirs, procs, .. } = dirs;
        drop(procs);
        let job = move || {
            // The runtime's folders go when the last of their cgroups did.
            let _owner = owner;
            for attempt in 0..50u64 {
                if dirs.iter().rev().all(|d| match std::fs::remove_dir(d) {
                    Ok(()) => true,
                    Err(e) => e.kind() == std::io::ErrorKind::NotFound,
                }) {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(20 * (attempt + 1).min(5)));
            }
            tracing::warn!(?dirs, "a run's cgroup could not be removed");
        };
        let _ = std::thread::Builder::new()
            .name("skills-cgroup".into())
            .spawn(job);
    }
}

impl Drop for RunCgroup {
    fn drop(&mut self) {
        if let Some(d) = self.dirs.take() {
            // Dropped without `release` (a run abandoned): its processes
            // may still be dying.
            let c = RunCgroup {
                owner: Arc::clone(&self.owner),
                dirs: Some(d),
                baseline: self.baseline,
            };
            c.remove_later();
        }
    }
}

/// The number after `key` in a `key value` lines file (0 when missing).
fn field(path: &Path, key: &str) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| {
            text.lines().find_map(|l| {
                let (k, v) = l.split_once(' ')?;
                (k == key).then(|| v.trim().parse().ok()).flatten()
            })
        })
        .unwrap_or(0)
}

/// Where the `pids` and `memory` controllers of this process's cgroups
/// are: for each, the folder of its own cgroup and the version.
#[derive(Debug, Default, PartialEq, Eq)]
struct Located {
    pids: Option<(PathBuf, Version)>,
    memory: Option<(PathBuf, Version)>,
}

/// Finds the controllers from `/proc/self/cgroup` (`own`) and
/// `/proc/self/mountinfo` (`mounts`). A v1 hierarchy wins over v2 for a
/// controller (on hybrid hosts v2 holds none); v2 serves a controller only
/// when the own cgroup hands it to its children (`cgroup.subtree_control`).
fn locate(own: &str, mounts: &str) -> Located {
    let mut out = Located::default();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if controllers.is_empty() {
            continue;
        }
        for want in ["pids", "memory"] {
            if controllers.split(',').any(|c| c == want)
                && let Some(dir) = mount_dir(mounts, "cgroup", Some(want), path)
            {
                let slot = if want == "pids" {
                    &mut out.pids
                } else {
                    &mut out.memory
                };
                *slot = Some((dir, Version::V1));
            }
        }
    }
    if out.pids.is_none() || out.memory.is_none() {
        let v2 = own
            .lines()
            .find_map(|l| l.strip_prefix("0::"))
            .and_then(|path| mount_dir(mounts, "cgroup2", None, path));
        if let Some(dir) = v2 {
            let delegated =
                std::fs::read_to_string(dir.join("cgroup.subtree_control")).unwrap_or_default();
            let has = |c: &str| delegated.split_whitespace().any(|d| d == c);
            if out.pids.is_none() && has("pids") {
                out.pids = Some((dir.clone(), Version::V2));
            }
            if out.memory.is_none() && has("memory") {
                out.memory = Some((dir, Version::V2));
            }
        }
    }
    out
}

/// The folder of cgroup `path` in the mount of type `fstype` (with the
/// super option `controller` for v1).
fn mount_dir(mounts: &str, fstype: &str, controller: Option<&str>, path: &str) -> Option<PathBuf> {
    for line in mounts.lines() {
        // id parent dev root point options [optional…] - fstype source superopts
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let mut r = right.split(' ');
        let (Some(t), Some(_src), Some(opts)) = (r.next(), r.next(), r.next()) else {
            continue;
        };
        if t != fstype {
            continue;
        }
        if let Some(c) = controller
            && !opts.split(',').any(|o| o == c)
        {
            continue;
        }
        let fields: Vec<&str> = left.split(' ').collect();
        let (Some(root), Some(point)) = (fields.get(3), fields.get(4)) else {
            continue;
        };
        // The mount may show a subtree (a cgroup namespace): the own path
        // is relative to the namespace's root, which is the mount's root
        // when they agree.
        let rel = path
            .strip_prefix(*root)
            .unwrap_or(path)
            .trim_start_matches('/');
        let mut dir = PathBuf::from(point);
        if !rel.is_empty() {
            dir.push(rel);
        }
        return Some(dir);
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const HYBRID_MOUNTS: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw";

    #[test]
    fn hybrid_hosts_use_the_v1_controllers() {
        let own = "8:pids:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/\n";
        let found = locate(own, HYBRID_MOUNTS);
        assert_eq!(
            found.pids,
            Some((PathBuf::from("/sys/fs/cgroup/pids"), Version::V1))
        );
        assert_eq!(
            found.memory,
            Some((
                PathBuf::from("/sys/fs/cgroup/memory/process_api/abc"),
                Version::V1
            ))
        );
    }

    #[test]
    fn nothing_found_without_mounts() {
        assert_eq!(locate("0::/user.slice\n", ""), Located::default());
        assert_eq!(locate("garbage", HYBRID_MOUNTS), Located::default());
    }

    #[test]
    fn namespaced_mount_roots_are_stripped() {
        let mounts = "50 40 0:40 /docker/x /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids";
        assert_eq!(
            mount_dir(mounts, "cgroup", Some("pids"), "/docker/x/sub"),
            Some(PathBuf::from("/sys/fs/cgroup/pids/sub"))
        );
        assert_eq!(mount_dir(mounts, "cgroup", Some("memory"), "/"), None);
    }

    #[test]
    fn counters_and_sizes_parse() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("memory.oom_control"),
            "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n",
        )
        .unwrap();
        assert_eq!(field(&dir.path().join("memory.oom_control"), "oom_kill"), 3);
        assert_eq!(field(&dir.path().join("missing"), "max"), 0);
        assert_eq!(human(2 << 30), "2 GiB");
        assert_eq!(human(1536), "1536 bytes");
        assert_eq!(human(64 << 20), "64 MiB");
    }

    #[test]
    fn fallbacks_say_what_is_not_enforced() {
        let limits = RunLimits::new();
        // No cgroups: every controller falls back.
        let e = Enforcement {
            limits: limits.clone(),
            cgroups: None,
            rlimits: Vec::new(),
            missing: vec!["x".into()],
        };
        assert!(e.fallback_note().unwrap().contains('x'));
        let none = Enforcement::new(RunLimits::unlimited(), Kind::Local);
        assert!(none.missing.is_empty());
        assert_eq!(
            none.rlimits,
            [Rlimit {
                resource: RlimitResource::Core,
                value: 0
            }]
        );
    }
}
