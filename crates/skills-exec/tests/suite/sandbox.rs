//! Sandbox tests. They need bubblewrap and working user namespaces; when the
//! sandbox cannot run here they fail (they never pass without running).

use std::sync::Arc;
use std::time::{Duration, Instant};

use skills_exec::{
    BWRAP_PATHS, CommandPolicy, RunLimits, SandboxOptions, SandboxRuntime, find_bwrap,
};
use skills_workspace::{RunRequest, WorkspaceRuntime};

use crate::common::*;

fn sandbox(dir: &std::path::Path) -> SandboxRuntime {
    sandbox_in(dir, false)
}

/// A sandbox runtime: one `bwrap` per workspace (`per_run` false, the
/// default) or one per run.
fn sandbox_in(dir: &std::path::Path, per_run: bool) -> SandboxRuntime {
    sandbox_with(dir, options(per_run), RunLimits::default())
}

/// The options every test sandbox starts from: this crate's helper binary
/// (or `$SKILLS_SANDBOX_HELPER`, where `.ci/exec-as-user` put a copy a
/// normal user can read).
pub(crate) fn options(per_run: bool) -> SandboxOptions {
    let helper = std::env::var_os("SKILLS_SANDBOX_HELPER")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_skills-sandbox").into());
    SandboxOptions::new()
        .sandbox_per_run(per_run)
        .helper(helper)
}

/// A sandbox runtime with workspaces in `dir/ws`. `dir` is made
/// traversable: as root the sandbox runs as an unprivileged user, who must
/// reach the workspaces.
pub(crate) fn sandbox_with(
    dir: &std::path::Path,
    options: SandboxOptions,
    limits: RunLimits,
) -> SandboxRuntime {
    traversable(dir);
    SandboxRuntime::builder(dir.join("ws"))
        .policy(CommandPolicy::unrestricted())
        .sandbox_options(options)
        .limits(limits)
        .build_sandbox()
        .unwrap_or_else(|e| panic!("the sandbox cannot run on this machine: {e}"))
}

/// Mode 0711 on `dir` (a test's temporary folder is 0700).
pub(crate) fn traversable(dir: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o711)).unwrap();
}

/// A sandbox runtime (see [`sandbox_in`]) with a generated skill `name`
/// staged in session `s`.
async fn staged(per_run: bool, name: &str) -> (tempfile::TempDir, SandboxRuntime) {
    let dir = tempfile::tempdir().unwrap();
    let rt = sandbox_in(dir.path(), per_run);
    rt.stage_skill(&sid("s"), &generated_skill(dir.path(), name))
        .await
        .unwrap();
    (dir, rt)
}

/// Checks that runs go the way `per_run` says: the shared sandbox gives each
/// run a fresh `/tmp` of its own (mode 1777), a `bwrap` per run bubblewrap's
/// (mode 755). A shared sandbox that silently fell back to a `bwrap` per run
/// fails here.
async fn assert_mode(rt: &SandboxRuntime, session: &str, skill: &str, per_run: bool) {
    let r = run(rt, session, RunRequest::new(skill, "stat -c %a /tmp")).await;
    let want = if per_run { "755\n" } else { "1777\n" };
    assert_eq!(
        r.stdout, want,
        "per_run={per_run}: the sandbox runs commands another way than asked (a shared sandbox that fell back to a bwrap per run?): {r:?}"
    );
}

#[test]
fn bwrap_comes_from_a_fixed_path() {
    let found = find_bwrap().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        BWRAP_PATHS.iter().any(|p| found == std::path::Path::new(p)),
        "{found:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn layout_for_every_example_and_generated_skill() {
    layout(false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn layout_for_every_example_and_generated_skill_bwrap_per_run() {
    layout(true).await;
}

async fn layout(per_run: bool) {
    let dir = tempfile::tempdir().unwrap();
    let rt: Arc<dyn WorkspaceRuntime> = Arc::new(sandbox_in(dir.path(), per_run));
    let mut skills = example_skills();
    skills.push(generated_skill(dir.path(), "gen-one"));
    skills.push(generated_skill(dir.path(), "gen-two"));
    for (i, skill) in skills.iter().enumerate() {
        check_layout(Arc::clone(&rt), &format!("sb-{i}"), skill, true).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn escapes_fail() {
    escapes(false).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn escapes_fail_bwrap_per_run() {
    escapes(true).await;
}

async fn escapes(per_run: bool) {
    let dir = tempfile::tempdir().unwrap();
    let rt = sandbox_in(dir.path(), per_run);
    let skill = generated_skill(dir.path(), "esc");
    rt.stage_skill(&sid("s"), &skill).await.unwrap();
    assert_mode(&rt, "s", "esc", per_run).await;
    escape_suite(&rt, rt.root(), &skill, "skills-sandbox", "", &[]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn timeout_kills_every_descendant() {
    timeout_kills(false, "4722").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn timeout_kills_every_descendant_bwrap_per_run() {
    timeout_kills(true, "4723").await;
}

async fn timeout_kills(per_run: bool, token: &str) {
    let dir = tempfile::tempdir().unwrap();
    let rt = sandbox_in(dir.path(), per_run);
    rt.stage_skill(&sid("s"), &generated_skill(dir.path(), "forks"))
        .await
        .unwrap();
    assert_mode(&rt, "s", "forks", per_run).await;
    let started = Instant::now();
    let r = run(
        &rt,
        "s",
        RunRequest::new("forks", forking_command(token)).timeout_secs(1),
    )
    .await;
    assert!(r.timed_out, "{r:?}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        left_after(&format!("sleep {token}"), Duration::from_millis(500)).await,
        Vec::<String>::new()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn allowed_read_paths_are_read_only() {
    let dir = tempfile::tempdir().unwrap();
    let tool = dir.path().join("toolchain");
    std::fs::create_dir_all(tool.join("bin")).unwrap();
    std::fs::write(tool.join("bin/mytool"), "#!/bin/sh\necho tool-ran\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            tool.join("bin/mytool"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }
    let rt = sandbox_with(
        dir.path(),
        options(false).allow_read(&tool),
        RunLimits::default(),
    );
    rt.stage_skill(&sid("s"), &generated_skill(dir.path(), "tools"))
        .await
        .unwrap();
    let r = run(
        &rt,
        "s",
        RunRequest::new(
            "tools",
            format!(
                "mytool; (echo x > {}/bin/x) 2>/dev/null && echo WROTE",
                tool.display()
            ),
        ),
    )
    .await;
    assert_eq!(r.stdout, "tool-ran\n", "{r:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn interactive_session_on_a_terminal() {
    use skills_workspace::{ExecRequest, ExecStatus, WriteStdinRequest};
    let dir = tempfile::tempdir().unwrap();
    let rt = sandbox(dir.path());
    rt.stage_skill(&sid("s"), &generated_skill(dir.path(), "ia"))
        .await
        .unwrap();
    let cmd = "[ -t 0 ] && echo tty; hostname; read -p 'Name: ' n; echo \"hello $n\"";
    let first = rt
        .start_exec(&sid("s"), &ExecRequest::new("ia", cmd).yield_ms(2000))
        .await
        .unwrap();
    let mut seen = first.output.clone();
    for _ in 0..30 {
        if seen.contains("Name:") {
            break;
        }
        seen.push_str(
            &rt.poll_exec(&sid("s"), &first.session_id, Some(200))
                .await
                .unwrap()
                .output,
        );
    }
    assert!(
        seen.contains("tty") && seen.contains("skills-sandbox"),
        "{seen:?}"
    );
    let out = rt
        .write_stdin(
            &sid("s"),
            &WriteStdinRequest::new(&first.session_id, "eve")
                .submit(true)
                .yield_ms(1000),
        )
        .await
        .unwrap();
    let mut text = out.output;
    let mut status = out.status;
    for _ in 0..50 {
        if status != ExecStatus::Running {
            break;
        }
        let p = rt
            .poll_exec(&sid("s"), &first.session_id, Some(100))
            .await
            .unwrap();
        text.push_str(&p.output);
        status = p.status;
    }
    assert!(text.contains("hello eve"), "{text:?}");
    assert_eq!(status, ExecStatus::Exited);
}

/// Runs of one session in the shared sandbox: each its own `/tmp`,
/// `/dev/shm` and System V IPC, also while they run at the same time;
/// `SIGPIPE` as usual; no descriptor of the host beyond the three standard
/// ones; a command cannot kill its namespace's init nor another run.
#[tokio::test(flavor = "multi_thread")]
async fn runs_of_a_session_are_isolated() {
    let (_dir, rt) = staged(false, "iso").await;
    assert_mode(&rt, "s", "iso", false).await;
    let first = run(
        &rt,
        "s",
        RunRequest::new(
            "iso",
            "echo x > /tmp/left; echo y > /dev/shm/left; ipcmk -Q >/dev/null 2>&1; \
             mkdir -p /tmp/locked/in; echo z > /tmp/locked/in/f; chmod 000 /tmp/locked/in /tmp/locked; \
             ls -A /tmp /dev/shm",
        ),
    )
    .await;
    assert!(first.stdout.contains("left"), "{first:?}");
    let r = run(
        &rt,
        "s",
        RunRequest::new(
            "iso",
            "ls -A /tmp/left /tmp/locked /dev/shm/left 2>/dev/null; echo queues=$(ipcs -q 2>/dev/null | grep -c '^0x'); \
             yes | head -1; ls /proc/self/fd | sort -n | tr '\\n' ' '",
        ),
    )
    .await;
    assert_eq!(r.stdout, "queues=0\ny\n0 1 2 3 ", "{r:?}");
    assert_eq!(r.stderr, "", "SIGPIPE ignored? {r:?}");
    // Two runs at once: neither sees the other's /tmp, and one killing
    // everything it can reach leaves the other running.
    let ra =
        RunRequest::new("iso", "echo a > /tmp/a; sleep 1; ls /tmp; echo a-alive").timeout_secs(60);
    let rb = RunRequest::new(
        "iso",
        "echo b > /tmp/b; kill -9 -1; kill -9 1; sleep 1; ls /tmp; echo b-alive",
    )
    .timeout_secs(60);
    let s = sid("s");
    let (a, b) = tokio::join!(rt.run(&s, &ra), rt.run(&s, &rb));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert!(
        a.stdout.starts_with("a\n") && a.stdout.ends_with("a-alive\n"),
        "{a:?}"
    );
    assert!(
        b.stdout.starts_with("b\n") && b.stdout.ends_with("b-alive\n"),
        "{b:?}"
    );
    // Whole lines: a workspace below /tmp shows there too, under a name
    // that may end in either letter.
    assert!(!a.stdout.lines().any(|l| l == "b") && !b.stdout.lines().any(|l| l == "a"));
    // The slots still work.
    let r = run(&rt, "s", RunRequest::new("iso", "echo again")).await;
    assert_eq!(r.stdout, "again\n");
    // Runs get a /proc of their own: only the slot's init and the run's
    // processes (also as root: the sandbox runs as an unprivileged user).
    let r = run(
        &rt,
        "s",
        RunRequest::new("iso", "cat /proc/[0-9]*/comm; true"),
    )
    .await;
    let mut names: Vec<&str> = r.stdout.lines().collect();
    names.sort_unstable();
    // The glob is expanded by bash before `cat` starts.
    assert_eq!(names, ["bash", "skills-sandbox"], "{r:?}");
}

/// Processes of the host whose command line mentions `needle`.
fn host_processes(needle: &str) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(needle) {
                found.push((pid, cmd));
            }
        }
    }
    found
}

/// The supervisor killed from outside between runs or during one: the run
/// in flight fails (no hang), the next run starts a new one; cleanup leaves
/// no process of the workspace behind.
#[tokio::test(flavor = "multi_thread")]
async fn supervisor_killed_from_outside() {
    let (_dir, rt) = staged(false, "sv").await;
    assert_mode(&rt, "s", "sv", false).await;
    let ws = rt.root().join("s").display().to_string();
    let kill_all = || {
        let bwraps: Vec<_> = host_processes(&format!("--bind {ws} {ws}"))
            .into_iter()
            .filter(|(_, c)| c.contains("bwrap"))
            .collect();
        assert!(!bwraps.is_empty(), "no bwrap for {ws}");
        for (pid, _) in bwraps {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    };
    kill_all();
    // Between runs: once it is gone (a run sent while it is dying fails,
    // as a run in flight does, below), the next run starts a new one.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !host_processes(&format!("--bind {ws} {ws}")).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let r = run(&rt, "s", RunRequest::new("sv", "echo after-kill")).await;
    assert_eq!(r.stdout, "after-kill\n", "{r:?}");
    // During a run.
    let req = RunRequest::new("sv", "sleep 4761; echo never").timeout_secs(60);
    let s = sid("s");
    let running = rt.run(&s, &req);
    let killer = async {
        assert!(wait_for_processes("sleep 4761", 1).await >= 1);
        kill_all();
    };
    let (r, ()) = tokio::join!(
        tokio::time::timeout(Duration::from_secs(60), running),
        killer
    );
    let r = r.expect("a run whose supervisor died must not hang");
    assert!(
        r.is_err() || r.as_ref().is_ok_and(|r| !r.stdout.contains("never")),
        "{r:?}"
    );
    assert_eq!(
        left_after("sleep 4761", Duration::from_secs(2)).await,
        Vec::<String>::new()
    );
    let r = run(&rt, "s", RunRequest::new("sv", "echo recovered")).await;
    assert_eq!(r.stdout, "recovered\n", "{r:?}");
    rt.cleanup(&sid("s")).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    while !host_processes(&ws).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(host_processes(&ws), Vec::new(), "left after cleanup");
}

/// A run whose future is dropped (the caller gave up) takes every process
/// it started with it.
#[tokio::test(flavor = "multi_thread")]
async fn dropped_run_kills_its_processes() {
    for per_run in [false, true] {
        let (_dir, rt) = staged(per_run, "dr").await;
        let token = if per_run { "4763" } else { "4762" };
        let req = RunRequest::new("dr", forking_command(token)).timeout_secs(60);
        let s = sid("s");
        let running = rt.run(&s, &req);
        let needle = format!("sleep {token}6");
        tokio::select! {
            r = running => panic!("the run ended: {r:?}"),
            n = wait_for_processes(&needle, 1) => assert!(n >= 1),
        }
        assert_eq!(
            left_after(&format!("sleep {token}"), Duration::from_secs(2)).await,
            Vec::<String>::new(),
            "per_run={per_run}"
        );
        // The session still runs commands.
        let r = run(&rt, "s", RunRequest::new("dr", "echo next")).await;
        assert_eq!(r.stdout, "next\n", "per_run={per_run}: {r:?}");
    }
}

/// Output that is binary garbage or longer than the cap, standard input,
/// exit codes and a `cwd`, through the shared sandbox.
#[tokio::test(flavor = "multi_thread")]
async fn output_input_and_exit_codes() {
    let (_dir, rt) = staged(false, "io").await;
    output_input_and_exit_codes_in(&rt).await;
}

/// Fifty sessions running at once in the shared sandbox: no errors, no
/// file of one session in another.
#[tokio::test(flavor = "multi_thread")]
async fn fifty_concurrent_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let rt = Arc::new(sandbox(dir.path()));
    let skill = generated_skill(dir.path(), "many");
    let mut tasks = Vec::new();
    for i in 0..50 {
        let (rt, skill) = (Arc::clone(&rt), skill.clone());
        tasks.push(tokio::spawn(async move {
            let session = sid(&format!("c{i}"));
            rt.stage_skill(&session, &skill).await.unwrap();
            let r = rt
                .run(
                    &session,
                    &RunRequest::new("many", format!("echo {i} > $OUTPUT_DIR/mine.txt; echo {i} > /tmp/mine; ls $WORKSPACE_DIR/.. | wc -l"))
                        .output_file("out/*.txt")
                        .timeout_secs(120),
                )
                .await
                .unwrap();
            assert_eq!(r.exit_code, Some(0), "{r:?}");
            assert_eq!(r.output_files.len(), 1, "{r:?}");
            assert_eq!(r.output_files[0].content.as_deref(), Some(format!("{i}\n").as_str()));
            // Only its own session folder is visible.
            assert_eq!(r.stdout.trim(), "1", "{r:?}");
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
}

/// A burst of parallel runs in one session leaves at most four idle slots
/// (two processes each) beside the supervisor.
#[tokio::test(flavor = "multi_thread")]
async fn idle_slots_are_capped() {
    let (_dir, rt) = staged(false, "burst").await;
    let rt = Arc::new(rt);
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let rt = Arc::clone(&rt);
            tokio::spawn(async move {
                let req = RunRequest::new("burst", "sleep 0.5").timeout_secs(60);
                rt.run(&sid("s"), &req).await
            })
        })
        .collect();
    for t in tasks {
        assert_eq!(t.await.unwrap().unwrap().exit_code, Some(0));
    }
    let ws = rt.root().join("s");
    // The supervisor and its slots: helper processes working in the
    // workspace.
    let count = || {
        host_processes("__skills_sandbox supervise")
            .into_iter()
            .filter(|(pid, _)| {
                std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .is_ok_and(|c| c.trim() == "skills-sandbox")
                    && std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|c| c == ws)
            })
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(2);
    while count() > 9 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let n = count();
    assert!(
        (3..=9).contains(&n),
        "{n} supervisor processes for {ws:?}: {:?}",
        host_processes(&ws.display().to_string())
            .iter()
            .map(|(p, c)| (p, c.chars().take(60).collect::<String>()))
            .collect::<Vec<_>>()
    );
    // Runs arriving together started one sandbox, and dropping the runtime
    // ends it (before, racing starts left stray `bwrap`s waiting forever).
    let needle = ws.display().to_string();
    assert_eq!(
        host_processes(&needle)
            .iter()
            .filter(|(_, c)| c.starts_with("/usr/bin/bwrap") || c.starts_with("/bin/bwrap"))
            .count(),
        2,
        "one bwrap (and its child) for {needle}"
    );
    drop(rt);
    let deadline = Instant::now() + Duration::from_secs(2);
    while !host_processes(&needle).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        host_processes(&needle),
        Vec::new(),
        "left after the runtime was dropped"
    );
}

/// The uid the sandbox runs as on the host: the default sandbox user when
/// the tests run as root, else the tests' own user.
fn expected_host_uid() -> u32 {
    let me = rustix::process::geteuid().as_raw();
    if me == 0 {
        skills_exec::DEFAULT_SANDBOX_USER.0
    } else {
        me
    }
}

/// The `Uid:` line of a host process, as four numbers.
fn host_uids(pid: u32) -> Vec<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .map(|l| {
            l.split_whitespace()
                .filter_map(|n| n.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

// threat model: S1
#[tokio::test(flavor = "multi_thread")]
async fn sandboxed_code_is_never_host_root() {
    for per_run in [false, true] {
        let (_dir, rt) = staged(per_run, "who").await;
        let token = if per_run { "4781" } else { "4780" };
        let req = RunRequest::new("who", format!("id -u; sleep {token}")).timeout_secs(60);
        let s = sid("s");
        let running = rt.run(&s, &req);
        let check = async {
            // The `sleep` itself (bwrap's and the helper's command lines
            // mention it too).
            let needle = format!("sleep {token}");
            let deadline = Instant::now() + Duration::from_secs(10);
            let mut found = Vec::new();
            while found.is_empty() && Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(10)).await;
                found = host_processes(&needle)
                    .into_iter()
                    .filter(|(_, c)| c.starts_with("sleep"))
                    .collect();
            }
            assert_eq!(found.len(), 1, "per_run={per_run}: {found:?}");
            let uids = host_uids(found[0].0);
            // Seen from the host: real, effective, saved and file-system
            // ids are all the unprivileged user.
            assert_eq!(uids, [expected_host_uid(); 4], "per_run={per_run}");
            let _ = std::process::Command::new("kill")
                .arg(found[0].0.to_string())
                .status();
        };
        let (r, ()) = tokio::join!(running, check);
        let r = r.unwrap();
        assert_eq!(
            r.stdout.lines().next(),
            Some(expected_host_uid().to_string().as_str())
        );
    }
}

// threat model: S3, S4
#[tokio::test(flavor = "multi_thread")]
async fn host_secrets_and_kernel_settings_are_out_of_reach() {
    let swappiness = std::fs::read_to_string("/proc/sys/vm/swappiness").unwrap();
    let core_pattern = std::fs::read_to_string("/proc/sys/kernel/core_pattern").unwrap();
    let host_name = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert!(
        std::path::Path::new("/etc/shadow").exists(),
        "no /etc/shadow to test with"
    );
    for per_run in [false, true] {
        let (_dir, rt) = staged(per_run, "sec").await;
        let cmd = "for f in /etc/shadow /etc/gshadow /etc/sudoers; do \
                     [ -e $f ] && { head -c 1 $f >/dev/null 2>&1 && echo READ:$f || echo refused:$f; }; done; \
                   ls /root >/dev/null 2>&1 && echo READ:/root; \
                   (echo 17 > /proc/sys/vm/swappiness) 2>/dev/null && echo WROTE:swappiness; \
                   (echo '|/tmp/x' > /proc/sys/kernel/core_pattern) 2>/dev/null && echo WROTE:core_pattern; \
                   hostname evil 2>/dev/null && echo CHANGED:hostname; \
                   unshare -Uru hostname evil2 2>/dev/null && echo UNSHARED; \
                   python3 -c 'import socket; socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)' 2>/dev/null && echo VSOCK; \
                   (echo 500 > /proc/self/oom_score_adj) 2>/dev/null && echo WROTE:proc; \
                   grep -E '^(Seccomp|NoNewPrivs|CapEff|CapBnd):' /proc/self/status; hostname";
        let r = run(&rt, "s", RunRequest::new("sec", cmd)).await;
        for bad in ["READ:", "WROTE:", "CHANGED:", "UNSHARED", "VSOCK"] {
            assert!(
                !r.stdout.contains(bad),
                "per_run={per_run}: {bad} in {}",
                r.stdout
            );
        }
        assert!(r.stdout.contains("refused:/etc/shadow"), "{}", r.stdout);
        // The seccomp filter (mode 2), no new privileges, no capabilities
        // now or ever.
        for want in [
            "Seccomp:\t2",
            "NoNewPrivs:\t1",
            "CapEff:\t0000000000000000",
            "CapBnd:\t0000000000000000",
        ] {
            assert!(
                r.stdout.contains(want),
                "per_run={per_run}: {want} in {}",
                r.stdout
            );
        }
        assert!(r.stdout.ends_with("skills-sandbox\n"), "{}", r.stdout);
        // The next run sees the same host name.
        let r = run(&rt, "s", RunRequest::new("sec", "hostname")).await;
        assert_eq!(r.stdout, "skills-sandbox\n");
    }
    assert_eq!(
        std::fs::read_to_string("/proc/sys/vm/swappiness").unwrap(),
        swappiness
    );
    assert_eq!(
        std::fs::read_to_string("/proc/sys/kernel/core_pattern").unwrap(),
        core_pattern
    );
    assert_eq!(
        std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap(),
        host_name
    );
}

// threat model: S3
#[tokio::test(flavor = "multi_thread")]
async fn set_id_bits_cannot_be_planted() {
    for per_run in [false, true] {
        let (_dir, rt) = staged(per_run, "suid").await;
        let cmd = "cp /bin/bash $OUTPUT_DIR/sh && chmod 755 $OUTPUT_DIR/sh && echo copied; \
                   chmod 4755 $OUTPUT_DIR/sh 2>/dev/null && echo SETUID; \
                   chmod g+s $OUTPUT_DIR/sh 2>/dev/null && echo SETGID; \
                   python3 -c 'import os; os.close(os.open(os.environ[\"OUTPUT_DIR\"] + \"/made\", os.O_CREAT | os.O_WRONLY, 0o4755))' 2>/dev/null && echo CREATED; \
                   install -m 4755 /bin/true $OUTPUT_DIR/inst 2>/dev/null && echo INSTALLED; \
                   stat -c '%a %n' $OUTPUT_DIR/*";
        let r = run(&rt, "s", RunRequest::new("suid", cmd)).await;
        assert!(r.stdout.contains("copied"), "{r:?}");
        for bad in ["SETUID", "SETGID", "CREATED", "INSTALLED"] {
            assert!(
                !r.stdout.contains(bad),
                "per_run={per_run}: {bad} in {}",
                r.stdout
            );
        }
        let out = rt.root().join("s/out");
        for entry in std::fs::read_dir(&out).unwrap().flatten() {
            use std::os::unix::fs::MetadataExt;
            let m = entry.metadata().unwrap();
            assert_eq!(m.mode() & 0o6000, 0, "{:?} is set-ID", entry.path());
            assert_ne!(m.uid(), 0, "{:?} belongs to root", entry.path());
        }
        // Run from outside by another user, the copy gives that user's
        // ids, never root's (only root can switch to another user here).
        if rustix::process::geteuid().is_root() {
            let sh = out.join("sh");
            let o = std::process::Command::new("setpriv")
                .args(["--reuid=4242", "--regid=4242", "--clear-groups"])
                .arg(&sh)
                .args(["-p", "-c", "id -u; id -g"])
                .output()
                .unwrap();
            // The workspace is not even reachable for that user, or the
            // copy runs as that user.
            let text = String::from_utf8_lossy(&o.stdout);
            assert!(!o.status.success() || text == "4242\n4242\n", "{o:?}");
        }
    }
}
