use std::path::{Path, PathBuf};
use std::sync::Arc;

use skills_exec::{CommandPolicy, LocalRuntime, RuntimeBuilder, SandboxRuntime};
use skills_testkit::fixture::SkillDir;
use skills_workspace::{
    RunRequest, RunResult, SessionId, SkillSource, WorkspaceErrorKind, WorkspaceRuntime,
};

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

/// The escape suite every confining runtime passes (threat model S1 to
/// S9, C1 to C8), against `rt` (its root `root`, `skill` staged in session
/// `s`): no network, no host home, no host `/tmp`,
/// no write to the examples, the skill or `/usr`, no capability, the
/// runtime's host name `hostname`, links out of `out/` refused, `cwd`
/// traversal refused, another session's files out of sight. `extra` is
/// added to the probing command and `extra_bad` to the markers it must not
/// print; returns the probing run's result for more checks.
pub(crate) async fn escape_suite(
    rt: &dyn WorkspaceRuntime,
    root: &Path,
    skill: &SkillSource,
    hostname: &str,
    extra: &str,
    extra_bad: &[&str],
) -> RunResult {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    // Names of their own: the suites of several runtimes run at once.
    static SUITES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = SUITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let host_tmp = std::env::temp_dir().join(format!("skills-escape-{}-{n}", std::process::id()));
    let skills_root = examples_dir();
    // A file in the real home folder, so "home is hidden" cannot pass on an
    // empty home.
    let home_probe =
        std::path::Path::new(&home).join(format!(".skills-exec-probe-{}-{n}", std::process::id()));
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
         {extra} echo done",
        tmp = host_tmp.display(),
        probe = home_probe.display(),
        skills = skills_root.display(),
    );
    let r = run(
        rt,
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
    ]
    .iter()
    .chain(extra_bad)
    {
        assert!(!r.stdout.contains(bad), "{bad} in {}", r.stdout);
    }
    assert!(
        r.stdout.contains("CapEff:\t0000000000000000"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains(hostname), "{}", r.stdout);
    assert!(!std::path::Path::new(&format!("{home}/skills-escape-test")).exists());
    assert!(!host_tmp.exists(), "the command wrote to the host's /tmp");
    assert!(!skills_root.join("escape.txt").exists());
    // The listener got nothing.
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err());
    // Links created inside pointing out are refused, not read.
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
        rt.read_file(&sid("s"), "out/passwd.txt", 100)
            .await
            .unwrap_err()
            .kind(),
        WorkspaceErrorKind::PathEscape
    );
    // cwd traversal.
    let e = rt
        .run(&sid("s"), &RunRequest::new("esc", "pwd").cwd("../../.."))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), WorkspaceErrorKind::PathEscape);
    // Another session's workspace is not visible.
    rt.stage_skill(&sid("other"), skill).await.unwrap();
    run(
        rt,
        "other",
        RunRequest::new("esc", "echo secret > $OUTPUT_DIR/secret.txt"),
    )
    .await;
    let other = root.join("other/out/secret.txt");
    assert!(other.exists());
    let hidden = run(
        rt,
        "s",
        RunRequest::new(
            "esc",
            format!("cat {} || echo not-visible", other.display()),
        ),
    )
    .await;
    assert!(hidden.stdout.contains("not-visible"), "{hidden:?}");
    r
}

/// Output that is binary garbage or longer than the cap, standard input,
/// a `cwd` and exit codes (a signal: 137; not found: 127), through `rt`,
/// with a skill named `io` staged in session `s`.
pub(crate) async fn output_input_and_exit_codes_in(rt: &dyn WorkspaceRuntime) {
    let r = run(
        rt,
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
        rt,
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
    let r = run(rt, "s", RunRequest::new("io", "kill -9 $$")).await;
    assert_eq!(r.exit_code, Some(137), "{r:?}");
    let r = run(rt, "s", RunRequest::new("io", "exec /nonexistent")).await;
    assert_eq!(r.exit_code, Some(127), "{r:?}");
}
