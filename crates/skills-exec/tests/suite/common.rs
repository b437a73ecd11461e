use std::path::{Path, PathBuf};
use std::sync::Arc;

use skills_exec::{CommandPolicy, LocalRuntime, RuntimeBuilder, SandboxRuntime};
use skills_testkit::fixture::SkillDir;
use skills_workspace::{RunRequest, RunResult, SessionId, SkillSource, WorkspaceRuntime};

/// The example skills (or `$SKILLS_EXAMPLES_DIR`, where `.ci/exec-as-user`
/// put a copy a normal user can read).
/// The session id `id` (a valid one: tests name their sessions).
pub(crate) fn sid(id: &str) -> SessionId {
    id.parse()
        .unwrap_or_else(|e| panic!("{id:?} is a valid session id: {e}"))
}

pub(crate) fn examples_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SKILLS_EXAMPLES_DIR") {
        return PathBuf::from(dir).canonicalize().unwrap();
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/skills")
        .canonicalize()
        .unwrap()
}

/// Every example skill, as folder sources.
pub(crate) fn example_skills() -> Vec<SkillSource> {
    let mut v: Vec<SkillSource> = std::fs::read_dir(examples_dir())
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("SKILL.md").is_file())
        .map(|e| {
            SkillSource::folder(
                e.file_name().to_str().unwrap(),
                e.path().display().to_string(),
            )
        })
        .collect();
    v.sort_by(|a, b| a.name().cmp(b.name()));
    assert!(v.len() >= 3, "expected the example skills");
    v
}

/// Writes a generated skill with a script and a nested folder.
pub(crate) fn generated_skill(parent: &Path, name: &str) -> SkillSource {
    let dir = SkillDir::new(name, "Generated for tests. Use when testing.")
        .body("Run scripts/hello.sh.\n")
        .executable(
            "scripts/hello.sh",
            "#!/bin/sh\necho \"hello from $SKILL_NAME\"\n",
        )
        .file("scripts/lib/data.txt", "data\n")
        .write_in(parent)
        .unwrap();
    SkillSource::folder(name, dir.display().to_string())
}

pub(crate) async fn run(rt: &dyn WorkspaceRuntime, session: &str, req: RunRequest) -> RunResult {
    rt.run(&sid(session), &req)
        .await
        .unwrap_or_else(|e| panic!("run {req:?}: {e}"))
}

/// The layout checks every staged skill must pass, in any runtime: links,
/// a writable `.venv`, a file in `out/` collected exactly once. With
/// `enforced_read_only`, writing to `SKILL.md` must fail.
pub(crate) async fn check_layout(
    rt: Arc<dyn WorkspaceRuntime>,
    session: &str,
    skill: &SkillSource,
    enforced_read_only: bool,
) {
    let session = &sid(session);
    let staged = rt.stage_skill(session, skill).await.unwrap();
    let name = skill.name();
    let req = RunRequest::new(
        name,
        "for l in out work inputs; do [ -L $l ] || echo \"$l is not a link\"; done; \
         touch .venv/ok && echo venv-ok; \
         (echo x >> SKILL.md) 2>/dev/null && echo skill-md-writable; \
         echo \"from $SKILL_NAME\" > out/result.txt",
    )
    .output_file("out/**")
    .output_file("$OUTPUT_DIR/*.txt")
    .output_file("skills/**/result.txt");
    let r = run(rt.as_ref(), session.as_str(), req).await;
    assert_eq!(r.exit_code, Some(0), "{name}: {r:?}");
    assert!(!r.stdout.contains("is not a link"), "{name}: {}", r.stdout);
    assert!(r.stdout.contains("venv-ok"), "{name}: {}", r.stdout);
    if enforced_read_only {
        assert!(
            !r.stdout.contains("skill-md-writable"),
            "{name}: SKILL.md was writable"
        );
    }
    let results: Vec<_> = r
        .output_files
        .iter()
        .filter(|f| f.name.ends_with("result.txt"))
        .collect();
    assert_eq!(results.len(), 1, "{name}: {:?}", r.output_files);
    assert_eq!(results[0].name, "out/result.txt");
    assert_eq!(
        results[0].content.as_deref(),
        Some(format!("from {name}\n").as_str())
    );
    assert_eq!(staged.path, format!("skills/{name}"));
    rt.cleanup(session).await.unwrap();
}

/// Processes whose command line contains `token` (Linux).
pub(crate) fn processes_with(token: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if e.file_name()
            .to_str()
            .is_some_and(|s| s.parse::<u32>().is_ok())
            && let Ok(cmd) = std::fs::read(e.path().join("cmdline"))
        {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let zombie = stat
                .rsplit(')')
                .next()
                .is_some_and(|r| r.trim_start().starts_with('Z'));
            if cmd.contains(token) && !zombie {
                found.push(cmd);
            }
        }
    }
    found
}

/// Waits (up to 10 s) until `n` live processes mention `token`, and returns
/// how many there are then. A process just spawned shows its parent's command
/// line until its `exec` completes, so a single look can miss it.
pub(crate) async fn wait_for_processes(token: &str, n: usize) -> usize {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let found = processes_with(token).len();
        if found >= n || std::time::Instant::now() >= deadline {
            return found;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// The live processes that mention `token` once none is left, or after
/// `grace`: a process killed a moment ago may need a few scheduler ticks to
/// leave `/proc` on a loaded machine.
pub(crate) async fn left_after(token: &str, grace: std::time::Duration) -> Vec<String> {
    let deadline = std::time::Instant::now() + grace;
    loop {
        let found = processes_with(token);
        if found.is_empty() || std::time::Instant::now() >= deadline {
            return found;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// A command that leaves children behind in every way it can and hangs:
/// a background child, a `setsid` child, a double fork, a `setsid` double fork.
pub(crate) fn forking_command(token: &str) -> String {
    format!(
        "sleep {token}1 & setsid sleep {token}2 & ( (sleep {token}3 &) & ) ; \
         ( setsid bash -c 'sleep {token}4 & sleep {token}5' & ) ; sleep {token}6"
    )
}

/// The local and the sandbox runtime, roots in `dir`, unrestricted, each
/// builder passed through `configure` first. The sandbox must work here
/// (the test fails otherwise; it never passes without running).
pub(crate) fn both_runtimes(
    dir: &Path,
    configure: impl Fn(RuntimeBuilder) -> RuntimeBuilder,
) -> Vec<(&'static str, Arc<dyn WorkspaceRuntime>)> {
    let local =
        configure(LocalRuntime::builder(dir.join("local")).policy(CommandPolicy::unrestricted()))
            .build()
            .unwrap();
    let sandbox = configure(
        SandboxRuntime::builder(dir.join("sandbox"))
            .policy(CommandPolicy::unrestricted())
            .sandbox_options(crate::sandbox::options(false)),
    )
    .build_sandbox()
    .unwrap_or_else(|e| panic!("the sandbox cannot run on this machine: {e}"));
    vec![("local", Arc::new(local)), ("sandbox", Arc::new(sandbox))]
}

#[cfg(feature = "container")]
/// The container engine and image the container tests use, from
/// `SKILLS_TEST_CONTAINER_HOST` and `SKILLS_TEST_CONTAINER_IMAGE` (set by
/// `bash .ci/test`); the test fails, saying how to start one, without them.
pub(crate) fn container_options() -> skills_exec::ContainerOptions {
    let hint = "start a Podman service with `bash .ci/podman start` and set \
                SKILLS_TEST_CONTAINER_HOST to the DOCKER_HOST it prints (or to any Docker or \
                Podman socket, with SKILLS_TEST_CONTAINER_IMAGE naming an image built by \
                deploy/runner/build-image.sh); `bash .ci/test` does both itself";
    let host = std::env::var("SKILLS_TEST_CONTAINER_HOST")
        .unwrap_or_else(|_| panic!("SKILLS_TEST_CONTAINER_HOST is not set: {hint}"));
    let image = std::env::var("SKILLS_TEST_CONTAINER_IMAGE")
        .unwrap_or_else(|_| skills_exec::DEFAULT_IMAGE.to_owned());
    skills_exec::ContainerOptions::new().host(host).image(image)
}

#[cfg(feature = "container")]
/// The container runtime, root in `dir`, unrestricted, its builder passed
/// through `configure` first; fails the test when no engine answers.
pub(crate) async fn container_runtime(
    dir: &Path,
    configure: impl Fn(RuntimeBuilder) -> RuntimeBuilder,
) -> skills_exec::ContainerRuntime {
    configure(skills_exec::ContainerRuntime::builder(dir).policy(CommandPolicy::unrestricted()))
        .build_container(container_options())
        .await
        .unwrap_or_else(|e| panic!("the container runtime cannot run here: {e}"))
}

#[cfg(feature = "container")]
/// [`container_runtime`] from synchronous code inside a multi-threaded
/// tokio test.
pub(crate) fn container_runtime_blocking(
    dir: &Path,
    configure: impl Fn(RuntimeBuilder) -> RuntimeBuilder,
) -> skills_exec::ContainerRuntime {
    tokio::task::block_in_place(|| {
        tokio::runtime::Handle::current().block_on(container_runtime(dir, configure))
    })
}
