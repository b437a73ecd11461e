//! The container runtime against a real engine (a Podman service started by
//! `bash .ci/podman start`, reached through `SKILLS_TEST_CONTAINER_HOST`):
//! the conformance suite, the layout of every example skill, the escape
//! suite of the sandbox, timeouts, limits, input and output. Without an
//! engine every test here fails, saying how to start one.

use std::sync::Arc;
use std::time::{Duration, Instant};

use skills_exec::{ContainerOptions, ContainerRuntime, RunLimits};
use skills_testkit::runtime as conformance;
use skills_workspace::{ExecRequest, RunRequest, SessionId, WorkspaceErrorKind, WorkspaceRuntime};

use crate::common::*;

async fn staged(name: &str) -> (tempfile::TempDir, ContainerRuntime) {
    let dir = tempfile::tempdir().unwrap();
    let rt = container_runtime(&dir.path().join("ws"), |b| b).await;
    rt.stage_skill(&sid("s"), &generated_skill(dir.path(), name))
        .await
        .unwrap();
    (dir, rt)
}

#[tokio::test(flavor = "multi_thread")]
async fn meets_the_runtime_contract() {
    let dir = tempfile::tempdir().unwrap();
    let source = conformance::skill(&dir.path().join("skills")).unwrap();
    let rt = container_runtime(&dir.path().join("workspaces"), |b| b).await;
    assert_eq!(rt.name(), "container");
    conformance::check_all(&rt, &source).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn layout_for_every_example_and_generated_skill() {
    let dir = tempfile::tempdir().unwrap();
    let rt: Arc<dyn WorkspaceRuntime> =
        Arc::new(container_runtime(&dir.path().join("ws"), |b| b).await);
    let mut skills = example_skills();
    skills.push(generated_skill(dir.path(), "gen-one"));
    for (i, skill) in skills.iter().enumerate() {
        check_layout(Arc::clone(&rt), &format!("ct-{i}"), skill, true).await;
    }
}

/// The sandbox's escape suite, in a container: no network, no host home,
/// no host `/tmp`, the skill and the system read-only, no capabilities,
/// not root, links out refused, another session's files out of sight.
#[tokio::test(flavor = "multi_thread")]
async fn escapes_fail() {
    let dir = tempfile::tempdir().unwrap();
    let rt = container_runtime(&dir.path().join("ws"), |b| b).await;
    let skill = generated_skill(dir.path(), "esc");
    rt.stage_skill(&sid("s"), &skill).await.unwrap();
    let r = escape_suite(
        &rt,
        rt.root(),
        &skill,
        skills_exec::CONTAINER_HOSTNAME,
        "(echo x > /escape) 2>/dev/null && echo ROOT-WRITE-OK; \
         (mv \"$SKILLS_DIR\" \"$WORKSPACE_DIR/moved\") 2>/dev/null && echo SKILLS-MOVED; \
         echo uid=$(id -u);",
        &["ROOT-WRITE-OK", "SKILLS-MOVED", "secret"],
    )
    .await;
    assert!(
        r.stdout.contains("uid=") && !r.stdout.contains("uid=0\n"),
        "{}",
        r.stdout
    );
}

/// A timeout kills the whole container: every process the command left,
/// however it detached, is gone (they are host processes too, in the
/// container's namespaces).
#[tokio::test(flavor = "multi_thread")]
async fn timeout_kills_the_whole_container() {
    let (_dir, rt) = staged("forks").await;
    let token = "4791";
    let started = Instant::now();
    let r = run(
        &rt,
        "s",
        RunRequest::new("forks", forking_command(token)).timeout_secs(1),
    )
    .await;
    assert!(r.timed_out, "{r:?}");
    assert_eq!(r.exit_code, None, "{r:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        left_after(&format!("sleep {token}"), Duration::from_secs(2)).await,
        Vec::<String>::new()
    );
    // A command that closes its output and goes on is killed on time too.
    let started = Instant::now();
    let r = run(
        &rt,
        "s",
        RunRequest::new("forks", "exec >&- 2>&-; sleep 4794").timeout_secs(1),
    )
    .await;
    assert!(r.timed_out, "{r:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        left_after("sleep 4794", Duration::from_secs(2)).await,
        Vec::<String>::new()
    );
    // Background processes of a run that ended normally die with its
    // container too.
    let r = run(
        &rt,
        "s",
        RunRequest::new("forks", "setsid sleep 47925 & echo started"),
    )
    .await;
    assert_eq!(r.stdout, "started\n", "{r:?}");
    assert_eq!(
        left_after("sleep 47925", Duration::from_secs(2)).await,
        Vec::<String>::new()
    );
}

/// A run whose future is dropped has its container removed.
#[tokio::test(flavor = "multi_thread")]
async fn dropped_run_removes_its_container() {
    let (_dir, rt) = staged("dr").await;
    let token = "4793";
    let req = RunRequest::new("dr", forking_command(token)).timeout_secs(60);
    let s = sid("s");
    let running = rt.run(&s, &req);
    let needle = format!("sleep {token}6");
    tokio::select! {
        r = running => panic!("the run ended: {r:?}"),
        n = wait_for_processes(&needle, 1) => assert!(n >= 1),
    }
    assert_eq!(
        left_after(&format!("sleep {token}"), Duration::from_secs(5)).await,
        Vec::<String>::new()
    );
    let r = run(&rt, "s", RunRequest::new("dr", "echo next")).await;
    assert_eq!(r.stdout, "next\n", "{r:?}");
}

/// Cleaning a session up ends its runs still going: their containers are
/// removed, their processes gone.
#[tokio::test(flavor = "multi_thread")]
async fn cleanup_removes_the_running_containers_of_the_session() {
    let (_dir, rt) = staged("cu").await;
    let rt = Arc::new(rt);
    let token = "4795";
    let running = {
        let rt = Arc::clone(&rt);
        tokio::spawn(async move {
            rt.run(
                &sid("s"),
                &RunRequest::new("cu", format!("sleep {token}1 & sleep {token}2")).timeout_secs(60),
            )
            .await
        })
    };
    assert!(wait_for_processes(&format!("sleep {token}2"), 1).await >= 1);
    rt.cleanup(&sid("s")).await.unwrap();
    assert_eq!(
        left_after(&format!("sleep {token}"), Duration::from_secs(5)).await,
        Vec::<String>::new()
    );
    // The run answers (its container is gone), without hanging.
    let answered = tokio::time::timeout(Duration::from_secs(10), running).await;
    assert!(answered.is_ok(), "the run did not end after cleanup");
}

/// Output longer than the cap, binary output, standard input, a `cwd`,
/// exit codes, the environment.
#[tokio::test(flavor = "multi_thread")]
async fn output_input_exit_codes_and_environment() {
    let (_dir, rt) = staged("io").await;
    output_input_and_exit_codes_in(&rt).await;
    // The standard input file went with its run.
    let r = run(
        &rt,
        "s",
        RunRequest::new("io", "find $WORKSPACE_DIR/runs -name .stdin | wc -l"),
    )
    .await;
    assert_eq!(r.stdout.trim(), "0", "{r:?}");
    let r = run(&rt, "s", RunRequest::new("io", "kill -9 $$")).await;
    assert_eq!(r.exit_code, Some(137), "{r:?}");
    let r = run(&rt, "s", RunRequest::new("io", "exec /nonexistent")).await;
    assert_eq!(r.exit_code, Some(127), "{r:?}");
    let r = run(
        &rt,
        "s",
        RunRequest::new(
            "io",
            "echo \"$SKILL_NAME|$HOME|$TMPDIR\"; [ \"$WORKSPACE_DIR\" = \"$(cd $WORKSPACE_DIR && pwd)\" ] && echo same-path; scripts/hello.sh",
        )
        .env("GREETING", "hi"),
    )
    .await;
    assert!(
        r.stdout.contains("io|") && r.stdout.contains("|/tmp"),
        "{r:?}"
    );
    assert!(r.stdout.contains("same-path"), "{r:?}");
    assert!(r.stdout.contains("hello from io"), "{r:?}");
}

/// The run limits are the engine's: memory (the run is killed and told
/// why), processes, file size.
#[tokio::test(flavor = "multi_thread")]
async fn limits_are_enforced_by_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let limits = RunLimits::new()
        .max_memory(Some(64 << 20))
        .max_processes(Some(32))
        .max_file_size(Some(1 << 20));
    let rt = container_runtime(&dir.path().join("ws"), |b| b.limits(limits.clone())).await;
    rt.stage_skill(&sid("s"), &generated_skill(dir.path(), "lim"))
        .await
        .unwrap();
    // 200 MiB held in one shell variable's worth of memory.
    let r = run(
        &rt,
        "s",
        RunRequest::new(
            "lim",
            "x=$(head -c 200000000 /dev/zero | tr '\\0' a); echo ${#x}",
        ),
    )
    .await;
    assert_ne!(r.exit_code, Some(0), "{r:?}");
    assert!(
        r.warnings.iter().any(|w| w.contains("memory limit")),
        "{r:?}"
    );
    // More processes than allowed cannot start.
    let r = run(
        &rt,
        "s",
        RunRequest::new(
            "lim",
            "for i in $(seq 40); do sleep 30 & done; echo started",
        )
        .timeout_secs(30),
    )
    .await;
    assert!(r.stderr.contains("fork"), "{r:?}");
    // A file larger than the cap stops at the cap.
    let r = run(
        &rt,
        "s",
        RunRequest::new(
            "lim",
            "head -c 3000000 /dev/zero > $WORK_DIR/big; wc -c < $WORK_DIR/big",
        ),
    )
    .await;
    assert_eq!(r.stdout.trim(), "1048576", "{r:?}");
}

/// The container runtime alone, for the hostile checks.
fn container_only(dir: &std::path::Path) -> Vec<(&'static str, Arc<dyn WorkspaceRuntime>)> {
    let artifacts = Arc::new(skills_exec::InMemoryArtifacts::new());
    vec![(
        "container",
        Arc::new(container_runtime_blocking(&dir.join("container"), |b| {
            b.artifacts(artifacts.clone())
        })),
    )]
}

/// The hostile suite (threat model H2 to H4): links and FIFOs a command
/// plants never redirect the runtime's own file work.
#[tokio::test(flavor = "multi_thread")]
async fn links_and_fifos_a_command_plants_never_redirect_the_runtime() {
    crate::hostile::links_and_fifos(container_only).await;
}

/// The hostile suite: folders swapped for links (`RENAME_EXCHANGE`) while
/// the runtime stages, runs and collects never redirect it.
#[tokio::test(flavor = "multi_thread")]
async fn swapping_folders_for_links_while_the_runtime_works_never_redirects_it() {
    crate::hostile::swapping_folders(container_only).await;
}

/// Interactive sessions are not offered; the error says what to use.
#[tokio::test(flavor = "multi_thread")]
async fn interactive_sessions_are_unsupported() {
    let (_dir, rt) = staged("ix").await;
    let e = rt
        .start_exec(&sid("s"), &ExecRequest::new("ix", "cat"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), WorkspaceErrorKind::Unsupported, "{e}");
    assert!(e.to_string().contains("skill_run"), "{e}");
}

/// No engine, or no image: `Unavailable`, saying what to do.
#[tokio::test(flavor = "multi_thread")]
async fn a_missing_engine_or_image_says_how_to_fix_it() {
    let dir = tempfile::tempdir().unwrap();
    let e = ContainerRuntime::builder(dir.path().join("a"))
        .build_container(ContainerOptions::new().host("unix:///nonexistent/engine.sock"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), WorkspaceErrorKind::Unavailable, "{e}");
    assert!(e.to_string().contains("DOCKER_HOST"), "{e}");
    let e = ContainerRuntime::builder(dir.path().join("b"))
        .build_container(container_options().image("localhost/skills-no-such-image:0"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), WorkspaceErrorKind::Unavailable, "{e}");
    assert!(e.to_string().contains("build-image.sh"), "{e}");
    let e = ContainerRuntime::builder(dir.path().join("c"))
        .build_container(container_options().cpus(-1.0))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), WorkspaceErrorKind::InvalidRequest, "{e}");
    // An engine on another host would mount its own folders, not ours.
    let e = ContainerRuntime::builder(dir.path().join("d"))
        .build_container(ContainerOptions::new().host("tcp://127.0.0.1:2375"))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), WorkspaceErrorKind::InvalidRequest, "{e}");
    assert!(e.to_string().contains("unix://"), "{e}");
}

/// Sessions run at once, each in its own containers.
#[tokio::test(flavor = "multi_thread")]
async fn concurrent_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let rt = Arc::new(container_runtime(&dir.path().join("ws"), |b| b).await);
    let skill = generated_skill(dir.path(), "con");
    let mut tasks = Vec::new();
    for i in 0..6 {
        let (rt, skill) = (Arc::clone(&rt), skill.clone());
        tasks.push(tokio::spawn(async move {
            let s: SessionId = format!("c{i}").parse().unwrap();
            rt.stage_skill(&s, &skill).await.unwrap();
            let r = rt
                .run(
                    &s,
                    &RunRequest::new(
                        "con",
                        format!("echo {i} > $OUTPUT_DIR/n.txt; ls $WORKSPACE_DIR/..  2>&1 | wc -l"),
                    )
                    .output_file("out/*.txt"),
                )
                .await
                .unwrap();
            assert_eq!(r.exit_code, Some(0), "{r:?}");
            assert_eq!(r.output_files.len(), 1, "{r:?}");
            assert_eq!(
                r.output_files[0].content.as_deref(),
                Some(format!("{i}\n").as_str())
            );
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
}
