//! Per-run limits (threat model: S6): a fork bomb, a large allocation and a
//! full `/tmp` are each stopped by the run's limit, with a warning in the
//! result, in both sandbox modes; the local runtime bounds what it can.
//! As root the host's cgroups enforce processes and memory; as a normal
//! user the resource-limit fallback does (and the result says so).

use skills_exec::{CommandPolicy, LocalRuntime, RunLimits};
use skills_workspace::{RunRequest, WorkspaceRuntime};

use crate::common::*;
use crate::sandbox::{options, sandbox_with};

/// Small limits, so the tests stay light on a shared machine.
fn small() -> RunLimits {
    RunLimits::new()
        .max_processes(Some(64))
        .max_memory(Some(256 << 20))
        .max_file_size(Some(64 << 20))
        .tmp_size(16 << 20)
        .shm_size(8 << 20)
}

/// Tries to start 3 000 processes that wait; prints how many started and
/// fails unless all did.
const FORK_BOMB: &str = "python3 -c '
import os, sys, time
n = 0
for i in range(3000):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    n += 1
print(\"started\", n)
sys.exit(0 if n == 3000 else 3)
'";

/// Allocates and touches 3 GiB.
const ALLOCATE: &str = "python3 -c '
b = bytearray(3 << 30)
for i in range(0, len(b), 4096):
    b[i] = 1
print(\"allocated\")
'";

/// A file written past the file size limit stops at the limit.
async fn file_size_is_capped(rt: &dyn WorkspaceRuntime) {
    let r = run(
        rt,
        "s",
        RunRequest::new(
            "lim",
            "head -c 100M /dev/zero > $WORK_DIR/big; stat -c %s $WORK_DIR/big",
        ),
    )
    .await;
    assert!(r.stdout.contains(&format!("{}", 64 << 20)), "{r:?}");
}

fn has(warnings: &[String], any: &[&str]) -> bool {
    warnings.iter().any(|w| any.iter().any(|a| w.contains(a)))
}

async fn bounded(per_run: bool) {
    let dir = tempfile::tempdir().unwrap();
    let rt = sandbox_with(dir.path(), options(per_run), small());
    rt.stage_skill(&sid("s"), &generated_skill(dir.path(), "lim"))
        .await
        .unwrap();
    // A fork bomb: stopped at the process limit.
    let r = run(
        &rt,
        "s",
        RunRequest::new("lim", FORK_BOMB).timeout_secs(120),
    )
    .await;
    let started: usize = r
        .stdout
        .trim()
        .strip_prefix("started ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("per_run={per_run}: {r:?}"));
    assert!(
        started < 64,
        "per_run={per_run}: {started} processes started"
    );
    assert_eq!(r.exit_code, Some(3), "{r:?}");
    assert!(
        has(&r.warnings, &["process limit", "RLIMIT_NPROC"]),
        "per_run={per_run}: {:?}",
        r.warnings
    );
    assert_eq!(
        left_after("time.sleep(60)", std::time::Duration::from_secs(2)).await,
        Vec::<String>::new()
    );
    // 3 GiB: stopped at the memory limit (killed by the kernel under a
    // cgroup, a failed allocation under RLIMIT_DATA).
    let r = run(&rt, "s", RunRequest::new("lim", ALLOCATE).timeout_secs(120)).await;
    assert!(!r.stdout.contains("allocated"), "per_run={per_run}: {r:?}");
    assert_ne!(r.exit_code, Some(0), "{r:?}");
    assert!(
        has(&r.warnings, &["memory limit", "RLIMIT_DATA"]),
        "per_run={per_run}: {:?}",
        r.warnings
    );
    // A full /tmp: the write fails at the size of the run's /tmp, which
    // is emptied for the next run.
    let r = run(
        &rt,
        "s",
        RunRequest::new(
            "lim",
            "head -c 3G /dev/zero > /tmp/fill; echo rc=$?; df -k /tmp | tail -1",
        )
        .timeout_secs(120),
    )
    .await;
    assert!(r.stdout.starts_with("rc=1"), "per_run={per_run}: {r:?}");
    assert!(r.stderr.contains("No space left"), "{r:?}");
    assert!(has(&r.warnings, &["filled its /tmp"]), "{:?}", r.warnings);
    let r = run(
        &rt,
        "s",
        RunRequest::new("lim", "ls -A /tmp; df -k /dev/shm | tail -1"),
    )
    .await;
    assert!(!r.stdout.contains("fill"), "{r:?}");
    // /dev/shm has its own size.
    let r = run(
        &rt,
        "s",
        RunRequest::new("lim", "head -c 1G /dev/zero > /dev/shm/fill; echo rc=$?"),
    )
    .await;
    assert!(r.stdout.starts_with("rc=1"), "{r:?}");
    assert!(
        has(&r.warnings, &["filled its /dev/shm"]),
        "{:?}",
        r.warnings
    );
    file_size_is_capped(&rt).await;
    // And the session goes on.
    let r = run(&rt, "s", RunRequest::new("lim", "echo fine")).await;
    assert_eq!(r.stdout, "fine\n");
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

#[tokio::test(flavor = "multi_thread")]
async fn runs_are_bounded_in_the_shared_sandbox() {
    bounded(false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn runs_are_bounded_with_a_bwrap_per_run() {
    bounded(true).await;
}

/// The local runtime bounds memory (a cgroup, or RLIMIT_DATA) and file
/// sizes; processes only where it has a cgroup (checked when it has one).
#[tokio::test(flavor = "multi_thread")]
async fn local_runs_are_bounded_where_they_can_be() {
    let dir = tempfile::tempdir().unwrap();
    let rt = LocalRuntime::builder(dir.path().join("ws"))
        .policy(CommandPolicy::unrestricted())
        .limits(small())
        .build()
        .unwrap();
    rt.stage_skill(&sid("s"), &generated_skill(dir.path(), "lim"))
        .await
        .unwrap();
    let r = run(&rt, "s", RunRequest::new("lim", ALLOCATE).timeout_secs(120)).await;
    assert!(!r.stdout.contains("allocated"), "{r:?}");
    assert!(
        has(&r.warnings, &["memory limit", "RLIMIT_DATA"]),
        "{:?}",
        r.warnings
    );
    file_size_is_capped(&rt).await;
    let r = run(&rt, "s", RunRequest::new("lim", "ulimit -c")).await;
    assert_eq!(r.stdout, "0\n", "core dumps are off");
}
