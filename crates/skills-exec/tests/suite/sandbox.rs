//! Sandbox tests. They need bubblewrap and working user namespaces; when the
//! sandbox cannot run here they fail (they never pass without running).

use std::sync::Arc;
use std::time::{Duration, Instant};

use skills_core::{RunRequest, WorkspaceErrorKind, WorkspaceRuntime};
use skills_exec::{BWRAP_PATHS, CommandPolicy, SandboxOptions, SandboxRuntime, find_bwrap};

use crate::common::*;

fn sandbox(dir: &std::path::Path) -> SandboxRuntime {
    sandbox_in(dir, false)
}

/// A sandbox runtime: one `bwrap` per workspace (`per_run` false, the
/// default) or one per run.
fn sandbox_in(dir: &std::path::Path, per_run: bool) -> SandboxRuntime {
    SandboxRuntime::builder(dir.join("ws"))
        .policy(CommandPolicy::unrestricted())
        .sandbox_options(SandboxOptions::new().sandbox_per_run(per_run))
        .build_sandbox()
        .unwrap_or_else(|e| panic!("the sandbox cannot run on this machine: {e}"))
}

/// A sandbox runtime (see [`sandbox_in`]) with a generated skill `name`
/// staged in session `s`.
async fn staged(per_run: bool, name: &str) -> (tempfile::TempDir, SandboxRuntime) {
    let dir = tempfile::tempdir().unwrap();
    let rt = sandbox_in(dir.path(), per_run);
    rt.stage_skill("s", &generated_skill(dir.path(), name))
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
    rt.stage_skill("s", &skill).await.unwrap();
    assert_mode(&rt, "s", "esc", per_run).await;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let host_tmp = std::env::temp_dir().join(format!("skills-escape-{}", std::process::id()));
    let skills_root = examples_dir();
    // A file in the real home folder, so "home is hidden" cannot pass on an
    // empty home.
    let home_probe =
        std::path::Path::new(&home).join(format!(".skills-exec-probe-{}", std::process::id()));
    std::fs::write(&home_probe, "secret").unwrap();
    struct Remove(std::path::PathBuf);
    impl Drop for Remove {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
    let _remove = Remove(home_probe.clone());
    let cmd = format!(
        "(echo hi > /dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo NET-OK; \
         (echo x > {home}/skills-escape-test) 2>/dev/null && echo HOME-WRITE-OK; \
         (echo x > {tmp}) 2>/dev/null; \
         (echo x > {skills}/escape.txt) 2>/dev/null && echo SKILLS-WRITE-OK; \
         (echo x > skills-md-probe; echo x >> SKILL.md) 2>/dev/null && echo SKILL-WRITE-OK; \
         ls -A {home} 2>/dev/null | head -3 | sed 's/^/HOME-ENTRY:/'; cat {probe} 2>/dev/null; \
         (echo x > /usr/escape) 2>/dev/null && echo USR-WRITE-OK; \
         grep CapEff /proc/self/status; hostname; echo pid=$$; \
         ln -s /etc/passwd $OUTPUT_DIR/passwd.txt; ln -s {home} $OUTPUT_DIR/home; ln -s ../../.. $OUTPUT_DIR/up; \
         echo done",
        tmp = host_tmp.display(),
        probe = home_probe.display(),
        skills = skills_root.display(),
    );
    let r = run(
        &rt,
        "s",
        RunRequest::new("esc", cmd)
            .output_file("out/**")
            .output_file("out/*.txt"),
    )
    .await;
    assert_eq!(r.exit_code, Some(0), "{r:?}");
    for bad in [
        "NET-OK",
        "HOME-WRITE-OK",
        "SKILLS-WRITE-OK",
        "SKILL-WRITE-OK",
        "USR-WRITE-OK",
        "HOME-ENTRY:",
    ] {
        assert!(!r.stdout.contains(bad), "{bad} in {}", r.stdout);
    }
    assert!(
        r.stdout.contains("CapEff:\t0000000000000000"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("skills-sandbox"));
    assert!(!std::path::Path::new(&format!("{home}/skills-escape-test")).exists());
    assert!(!host_tmp.exists(), "the sandbox wrote to the host's /tmp");
    assert!(!skills_root.join("escape.txt").exists());
    // The listener got nothing.
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err());
    // Links created inside the sandbox pointing out are refused, not read.
    assert!(
        r.output_files.iter().all(|f| !f.name.contains("passwd")),
        "{:?}",
        r.output_files
    );
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("refused `out/passwd.txt`")),
        "{:?}",
        r.warnings
    );
    assert_eq!(
        rt.read_file("s", "out/passwd.txt", 100)
            .await
            .unwrap_err()
            .kind(),
        WorkspaceErrorKind::PathEscape
    );
    // cwd traversal.
    let e = rt
        .run("s", &RunRequest::new("esc", "pwd").cwd("../../.."))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), WorkspaceErrorKind::PathEscape);
    // Another session's workspace is not visible.
    rt.stage_skill("other", &skill).await.unwrap();
    run(
        &rt,
        "other",
        RunRequest::new("esc", "echo secret > $OUTPUT_DIR/secret.txt"),
    )
    .await;
    let other = rt.root().join("other/out/secret.txt");
    assert!(other.exists());
    let r = run(
        &rt,
        "s",
        RunRequest::new(
            "esc",
            format!("cat {} || echo not-visible", other.display()),
        ),
    )
    .await;
    assert!(r.stdout.contains("not-visible"), "{r:?}");
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
    rt.stage_skill("s", &generated_skill(dir.path(), "forks"))
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
    let rt = SandboxRuntime::builder(dir.path().join("ws"))
        .policy(CommandPolicy::unrestricted())
        .sandbox_options(SandboxOptions::new().allow_read(&tool))
        .build_sandbox()
        .unwrap();
    rt.stage_skill("s", &generated_skill(dir.path(), "tools"))
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
    use skills_core::{ExecRequest, ExecStatus, WriteStdinRequest};
    let dir = tempfile::tempdir().unwrap();
    let rt = sandbox(dir.path());
    rt.stage_skill("s", &generated_skill(dir.path(), "ia"))
        .await
        .unwrap();
    let cmd = "[ -t 0 ] && echo tty; hostname; read -p 'Name: ' n; echo \"hello $n\"";
    let first = rt
        .start_exec("s", &ExecRequest::new("ia", cmd).yield_ms(2000))
        .await
        .unwrap();
    let mut seen = first.output.clone();
    for _ in 0..30 {
        if seen.contains("Name:") {
            break;
        }
        seen.push_str(
            &rt.poll_exec("s", &first.session_id, Some(200))
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
            "s",
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
            .poll_exec("s", &first.session_id, Some(100))
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
            "echo x > /tmp/left; echo y > /dev/shm/left; ipcmk -Q >/dev/null 2>&1; ls -A /tmp /dev/shm",
        ),
    )
    .await;
    assert!(first.stdout.contains("left"), "{first:?}");
    let r = run(
        &rt,
        "s",
        RunRequest::new(
            "iso",
            "ls -A /tmp/left /dev/shm/left 2>/dev/null; echo queues=$(ipcs -q 2>/dev/null | grep -c '^0x'); \
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
    let (a, b) = tokio::join!(rt.run("s", &ra), rt.run("s", &rb));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert!(
        a.stdout.starts_with("a\n") && a.stdout.ends_with("a-alive\n"),
        "{a:?}"
    );
    assert!(
        b.stdout.starts_with("b\n") && b.stdout.ends_with("b-alive\n"),
        "{b:?}"
    );
    assert!(!a.stdout.contains("b\n") && !b.stdout.contains("a\n"));
    // The slots still work.
    let r = run(&rt, "s", RunRequest::new("iso", "echo again")).await;
    assert_eq!(r.stdout, "again\n");
    // A normal user's runs get a /proc of their own: only the slot's init
    // and the run's processes (as root, bubblewrap's covers on the
    // sandbox's /proc make the kernel refuse a new one).
    let uid = std::process::Command::new("id").arg("-u").output().unwrap();
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        let r = run(
            &rt,
            "s",
            RunRequest::new("iso", "cat /proc/[0-9]*/comm; true"),
        )
        .await;
        let mut names: Vec<&str> = r.stdout.lines().collect();
        names.sort_unstable();
        // The glob is expanded by bash before `cat` starts.
        assert_eq!(names, ["bash", "perl"], "{r:?}");
    }
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
    let r = run(&rt, "s", RunRequest::new("sv", "echo after-kill")).await;
    assert_eq!(r.stdout, "after-kill\n", "{r:?}");
    // During a run.
    let req = RunRequest::new("sv", "sleep 4761; echo never").timeout_secs(60);
    let running = rt.run("s", &req);
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
    rt.cleanup("s").await.unwrap();
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
        let running = rt.run("s", &req);
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
    let r = run(
        &rt,
        "s",
        RunRequest::new(
            "io",
            "head -c 300000 /dev/urandom; head -c 100 /dev/urandom >&2; exit 3",
        ),
    )
    .await;
    assert_eq!(r.exit_code, Some(3), "{r:?}");
    assert!(
        r.warnings.iter().any(|w| w.contains("stdout was longer")),
        "{:?}",
        r.warnings
    );
    let r = run(
        &rt,
        "s",
        RunRequest::new("io", "cat; pwd")
            .stdin("fed\n")
            .cwd("scripts/lib"),
    )
    .await;
    assert_eq!(r.exit_code, Some(0), "{r:?}");
    assert!(
        r.stdout.starts_with("fed\n") && r.stdout.trim_end().ends_with("scripts/lib"),
        "{r:?}"
    );
    let r = run(&rt, "s", RunRequest::new("io", "kill -9 $$")).await;
    assert_eq!(r.exit_code, Some(137), "{r:?}");
    let r = run(&rt, "s", RunRequest::new("io", "exec /nonexistent")).await;
    assert_eq!(r.exit_code, Some(127), "{r:?}");
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
            let session = format!("c{i}");
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
                rt.run("s", &req).await
            })
        })
        .collect();
    for t in tasks {
        assert_eq!(t.await.unwrap().unwrap().exit_code, Some(0));
    }
    let ws = rt.root().join("s");
    // The supervisor and its slots: `perl` processes working in the
    // workspace.
    let count = || {
        host_processes("use File::Path")
            .into_iter()
            .filter(|(pid, _)| {
                std::fs::read_to_string(format!("/proc/{pid}/comm"))
                    .is_ok_and(|c| c.trim() == "perl")
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
