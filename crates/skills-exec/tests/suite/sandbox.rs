//! Sandbox tests. They need bubblewrap and working user namespaces; when the
//! sandbox cannot run here they fail (they never pass without running).

use std::sync::Arc;
use std::time::{Duration, Instant};

use skills_core::{RunRequest, WorkspaceErrorKind, WorkspaceRuntime};
use skills_exec::{BWRAP_PATHS, CommandPolicy, SandboxOptions, SandboxRuntime, find_bwrap};

use crate::common::*;

fn sandbox(dir: &std::path::Path) -> SandboxRuntime {
    SandboxRuntime::builder(dir.join("ws"))
        .policy(CommandPolicy::unrestricted())
        .build_sandbox()
        .unwrap_or_else(|e| panic!("the sandbox cannot run on this machine: {e}"))
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
    let dir = tempfile::tempdir().unwrap();
    let rt: Arc<dyn WorkspaceRuntime> = Arc::new(sandbox(dir.path()));
    let mut skills = example_skills();
    skills.push(generated_skill(dir.path(), "gen-one"));
    skills.push(generated_skill(dir.path(), "gen-two"));
    for (i, skill) in skills.iter().enumerate() {
        check_layout(Arc::clone(&rt), &format!("sb-{i}"), skill, true).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn escapes_fail() {
    let dir = tempfile::tempdir().unwrap();
    let rt = sandbox(dir.path());
    let skill = generated_skill(dir.path(), "esc");
    rt.stage_skill("s", &skill).await.unwrap();
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
    let dir = tempfile::tempdir().unwrap();
    let rt = sandbox(dir.path());
    rt.stage_skill("s", &generated_skill(dir.path(), "forks"))
        .await
        .unwrap();
    let token = "4722";
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
